// The editor's top bar: design name, revision, validation badge, behaviour hash, and the
// canvas toolbar (undo/redo, copy/paste/delete, fit, autosave, save).
import { useReactFlow } from "@xyflow/react";
import { isDirty } from "../store/derived";
import { useEditor } from "../store/editor";
import { SiteMenu, type SiteConfig } from "./SiteNav";

export function TopBar({ homeUrl, site }: { homeUrl: string; site: SiteConfig }) {
  const name = useEditor((s) => s.name);
  const setName = useEditor((s) => s.setName);
  const canEdit = useEditor((s) => s.canEdit);
  const revision = useEditor((s) => s.design.revision);
  const dirty = useEditor(isDirty);
  return (
    <header className="topbar">
      <a className="brand" href={homeUrl} aria-label="All designs">◆ Kionga</a>
      <label className="sr-only" htmlFor="design-name">Design name</label>
      <input id="design-name" className="design-name" value={name} readOnly={!canEdit}
             onChange={(e) => setName(e.target.value)} />
      <span className="muted small" data-testid="revision">rev {revision}{dirty ? " · unsaved" : ""}</span>
      <ValidationBadge />
      <span className="spacer" />
      <Toolbar />
      <SiteMenu site={site} current="designer" />
    </header>
  );
}

function ValidationBadge() {
  const validating = useEditor((s) => s.validating);
  const report = useEditor((s) => s.report?.report ?? null);
  const savedHash = useEditor((s) => s.design.validation?.content_sha256 ?? null);
  const errors = (report?.issues ?? []).filter((i) => i.severity === "error").length;
  const hash = report?.content_sha256 ?? null;
  const asSaved = !!hash && !!savedHash && hash === savedHash;
  return (
    <>
      <span className={"badge " + (validating ? "pending" : report?.runnable ? "ok" : "bad")}
            data-testid="runnable" role="status" aria-live="polite">
        {validating ? "checking…" : report ? (report.runnable ? "✓ runnable" : `✕ ${errors} error${errors === 1 ? "" : "s"}`) : "…"}
      </span>
      <span className="hash" data-testid="hash" data-hash={hash ?? ""}
            title={hash ? `Behaviour hash ${hash}${asSaved ? " (same as the saved revision)" : ""}` : "No hash: the graph does not normalize."}>
        # {hash ? hash.slice(0, 12) : "—"}{asSaved ? " · as saved" : ""}
      </span>
    </>
  );
}

function Toolbar() {
  const flow = useReactFlow();
  const s = useEditor((x) => x);
  const dirty = isDirty(s);
  const anyNode = s.nodes.some((n) => n.selected);
  const anyEdge = s.edges.some((e) => e.selected);
  return (
    <div className="toolbar" role="toolbar" aria-label="Canvas">
      <button type="button" onClick={s.undo} disabled={!s.history.past.length} title="Undo (Ctrl+Z)">Undo</button>
      <button type="button" onClick={s.redo} disabled={!s.history.future.length} title="Redo (Ctrl+Shift+Z)">Redo</button>
      <button type="button" onClick={s.copy} disabled={!anyNode} title="Copy (Ctrl+C)">Copy</button>
      <button type="button" onClick={s.paste} disabled={!s.canEdit} title="Paste (Ctrl+V)">Paste</button>
      <button type="button" onClick={s.deleteSelected} disabled={!s.canEdit || (!anyNode && !anyEdge)} title="Delete (Del)">Delete</button>
      <button type="button" onClick={() => void flow.fitView({ duration: 200 })} title="Zoom to fit (F)">Fit</button>
      <label className="check small" title="Save automatically after each change">
        <input type="checkbox" checked={s.autosave} onChange={(e) => s.setAutosave(e.target.checked)} /> Autosave
      </label>
      <button type="button" className="primary" onClick={() => void s.save()}
              disabled={!s.canEdit || s.saving || (!dirty && !s.conflict)} title="Save (Ctrl+S)">
        {s.saving ? "Saving…" : "Save"}
      </button>
    </div>
  );
}
