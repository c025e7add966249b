// The notice line (what the last action did) and the stale-revision dialog.
import { useEditor } from "../store/editor";

export function NoticeBar() {
  const notice = useEditor((s) => s.notice);
  const conflict = useEditor((s) => s.conflict);
  const dismiss = useEditor((s) => s.dismiss);
  if (!notice || conflict) return null;
  return (
    <div className={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"} data-testid="notice">
      {notice.text}
      <button type="button" className="link" aria-label="Dismiss" onClick={dismiss}>×</button>
    </div>
  );
}

export function ConflictDialog() {
  const conflict = useEditor((s) => s.conflict);
  const reloadTheirs = useEditor((s) => s.reloadTheirs);
  const reapplyMine = useEditor((s) => s.reapplyMine);
  if (!conflict) return null;
  const rev = conflict.current.revision;
  return (
    <div className="conflict" role="alertdialog" aria-labelledby="conflict-title" data-testid="conflict">
      <h2 id="conflict-title">Someone saved revision {rev} meanwhile</h2>
      <div className="cols">
        <div><h3>Their changes</h3><ul>{conflict.theirs.length ? conflict.theirs.map((t, i) => <li key={i}>{t}</li>) : <li>name or description only</li>}</ul></div>
        <div><h3>Your unsaved changes</h3><ul>{conflict.mine.length ? conflict.mine.map((t, i) => <li key={i}>{t}</li>) : <li>none</li>}</ul></div>
      </div>
      <div className="row">
        <button type="button" onClick={reloadTheirs}>Reload theirs (drop mine)</button>
        <button type="button" className="primary" onClick={() => void reapplyMine()}>Re-apply my changes on revision {rev}</button>
      </div>
    </div>
  );
}
