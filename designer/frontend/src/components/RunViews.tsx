// What the run panel shows: the run's options, the current run's status, output and usage,
// and the past runs.
import type { RunView } from "../runstate";
import type { Run } from "../types";

export interface RunOptionsValue {
  sessionId: string;
  historyText: string;
  stopAfter: string;
}

export function RunOptions({ value, nodeIds, onChange }: {
  value: RunOptionsValue; nodeIds: string[]; onChange: (v: RunOptionsValue) => void;
}) {
  const set = (patch: Partial<RunOptionsValue>) => onChange({ ...value, ...patch });
  return (
    <details>
      <summary>Options</summary>
      <label htmlFor="run-session">Session ID (memory)</label>
      <input id="run-session" value={value.sessionId} onChange={(e) => set({ sessionId: e.target.value })} />
      <label htmlFor="run-history">History (earlier turns)</label>
      <textarea id="run-history" rows={3} value={value.historyText}
                placeholder={"user: Hi\nassistant: Hello! How can I help?"}
                aria-describedby="run-history-help"
                onChange={(e) => set({ historyText: e.target.value })} />
      <small id="run-history-help">One turn per line, starting with user:, assistant: or system:.</small>
      <label htmlFor="run-stop">Stop after node</label>
      <select id="run-stop" value={value.stopAfter} onChange={(e) => set({ stopAfter: e.target.value })}>
        <option value="">— run to the end —</option>
        {nodeIds.map((id) => <option key={id} value={id}>{id}</option>)}
      </select>
    </details>
  );
}

export function RunStatus({ run, view, replaying }: { run: Run; view: RunView; replaying: boolean }) {
  return (
    <div className="run-status" aria-live="polite" data-testid="run-status"
         data-status={view.status} data-deltas={view.deltaCount} data-run-id={run.id}>
      <div><strong>Status:</strong> <span className={`pill st-${view.status}`}>{view.status}{replaying ? " (replay)" : ""}</span></div>
      {view.reason && <div><strong>Reason:</strong> {view.reason}</div>}
      {view.output !== null && (
        <div><strong>Output</strong><pre className="output" data-testid="run-output">{view.output}</pre></div>
      )}
      {(view.tokens !== null || run.usage?.tokens !== undefined) && (
        <div className="muted small">Usage: {view.tokens ?? run.usage?.tokens} tokens
          {run.usage?.cost !== undefined ? ` · cost ${run.usage.cost}` : ""}</div>
      )}
      <div className="muted small">Run {run.id.slice(0, 8)} · seq {view.lastSeq} · {view.deltaCount} streamed pieces</div>
    </div>
  );
}

/** runs null: still loading. */
export function PastRuns({ runs, onReplay }: { runs: Run[] | null; onReplay: (id: string) => void }) {
  if (runs === null) return <p className="muted small">Loading…</p>;
  if (!runs.length) return <p className="muted small">No runs yet.</p>;
  return (
    <ul className="past-runs">
      {runs.map((r) => (
        <li key={r.id}>
          <span className={`pill st-${r.status}`}>{r.status}</span>
          <span className="muted small">{new Date(r.created_at).toLocaleTimeString()}</span>
          <span className="trunc" title={r.input}>{r.input}</span>
          <button type="button" className="link" onClick={() => onReplay(r.id)}
                  aria-label={`Replay run ${r.id.slice(0, 8)}`}>Replay</button>
        </li>
      ))}
    </ul>
  );
}
