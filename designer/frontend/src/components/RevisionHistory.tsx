// The design's revision history: compare any revision with the current one (nodes, edges
// and settings added, removed and changed; whether behaviour changed) and restore it as
// the next revision (POST …/revisions/{n}/restore, audited).
import { useState } from "react";
import { api, ApiError } from "../api";
import { useEditor } from "../store/editor";
import type { Design, FieldChange, GraphDiff } from "../types";

const show = (v: unknown) => (v === undefined || v === null ? "—" : typeof v === "string" ? v : JSON.stringify(v));

export function RevisionHistory() {
  const design = useEditor((s) => s.design);
  const canEdit = useEditor((s) => s.canEdit);
  const loadSaved = useEditor((s) => s.loadSaved);
  const [open, setOpen] = useState<{ number: number; diff: GraphDiff } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const compare = async (number: number) => {
    setError(null);
    try {
      const diff = await api<GraphDiff>("GET", `/agent-designs/${design.id}/diff?from=${number}&to=${design.revision}`);
      setOpen({ number, diff });
    } catch (e) { setError(e instanceof ApiError ? e.message : String(e)); }
  };
  const restore = async (number: number) => {
    setError(null);
    try {
      const saved = await api<Design>("POST", `/agent-designs/${design.id}/revisions/${number}/restore`, { revision: design.revision });
      loadSaved(saved, `Restored revision ${number} as revision ${saved.revision}.`);
      setOpen(null);
    } catch (e) { setError(e instanceof ApiError ? e.message : String(e)); }
  };
  return (
    <section className="revision-history" aria-label="Revision history">
      <h3>Revision history</h3>
      {error && <p className="error" role="alert">{error}</p>}
      <ul className="past-runs">
        {design.revisions.map((r) => (
          <li key={r.number}>
            <span className="pill">rev {r.number}</span>
            <span className="muted small">{show(r.author)} · {new Date(String(r.created_at)).toLocaleString()}</span>
            {r.number !== design.revision && (
              <button type="button" className="link" onClick={() => void compare(r.number)}
                      aria-label={`Compare revision ${r.number} with the current one`}>Compare</button>
            )}
          </li>
        ))}
      </ul>
      {open && (
        <div className="diff" data-testid="revision-diff">
          <p><strong>Revision {open.number} → {design.revision}:</strong>{" "}
            {open.diff.behaviour_changed ? "behaviour changed" : "same behaviour (a cosmetic edit)"}</p>
          <DiffList diff={open.diff} />
          {canEdit && (
            <button type="button" onClick={() => void restore(open.number)}>Restore revision {open.number}</button>
          )}
        </div>
      )}
    </section>
  );
}

export function DiffList({ diff }: { diff: GraphDiff }) {
  const change = (c: FieldChange, k: number) => (
    <li key={k} className={c.cosmetic ? "muted" : ""}>{c.field}: {show(c.before)} → {show(c.after)}{c.cosmetic ? " (cosmetic)" : ""}</li>
  );
  const items = [
    ...diff.nodes.added.map((n) => <li key={`a${n.id}`}>added node {n.id} ({n.kind})</li>),
    ...diff.nodes.removed.map((n) => <li key={`r${n.id}`}>removed node {n.id} ({n.kind})</li>),
    ...diff.nodes.changed.map((n) => <li key={`c${n.id}`}>changed node {n.id}<ul>{n.changes.map(change)}</ul></li>),
    ...diff.edges.added.map((e, k) => <li key={`ea${k}`}>added edge {e.from}.{e.from_port} → {e.to}</li>),
    ...diff.edges.removed.map((e, k) => <li key={`er${k}`}>removed edge {e.from}.{e.from_port} → {e.to}</li>),
    ...diff.settings.map(change),
  ];
  return items.length ? <ul className="small">{items}</ul> : <p className="muted small">No difference.</p>;
}
