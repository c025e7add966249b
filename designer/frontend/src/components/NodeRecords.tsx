// A node of the run on screen (live or past): every attempt's inputs, output and port,
// error, tokens, cost and time, from its records (GET …/runs/{run}/nodes/{node}), in
// JSON, text or table views with copy; and "Re-run from here".
import { useEffect, useState } from "react";
import { api, ApiError } from "../api";
import type { NodeRun } from "../context";
import type { NodeRecord, RecordedValue } from "../types";

type View = "json" | "text" | "table";

interface Props {
  designId: string;
  runId: string;
  nodeId: string;
  /** The node's state in the run on screen: records are read again when it changes. */
  state: NodeRun | undefined;
  runEnded: boolean;
  canEdit: boolean;
  onRerun: () => void;
}

export function NodeRecords({ designId, runId, nodeId, state, runEnded, canEdit, onRerun }: Props) {
  const [attempts, setAttempts] = useState<NodeRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const skipped = state?.status === "skipped";
  const settled = state?.status === "completed" || state?.status === "failed" || runEnded;
  useEffect(() => {
    setAttempts(null);
    setError(null);
    if (!settled || skipped) return;
    let live = true;
    api<{ attempts: NodeRecord[] }>("GET", `/agent-designs/${designId}/runs/${runId}/nodes/${nodeId}`)
      .then((d) => { if (live) setAttempts(d.attempts); },
            (e) => { if (live) setError(e instanceof ApiError && e.status === 404 ? "No record of this node in this run." : String(e)); });
    return () => { live = false; };
  }, [designId, runId, nodeId, settled, skipped, state?.status]);
  return (
    <section className="node-records" aria-label="Node records" data-testid="node-records">
      <h3>Run {runId.slice(0, 8)}</h3>
      {skipped ? <p className="muted small">This node was skipped in this run.</p>
        : !settled && <p className="muted small">{state ? `This node is ${state.status}…` : "This node has not run yet."}</p>}
      {error && <p className="muted small">{error}</p>}
      {attempts?.map((a) => <Attempt key={a.attempt} record={a} />)}
      {canEdit && runEnded && (
        <button type="button" onClick={onRerun} title="Run this node and everything after it again; the nodes before it repeat this run's recorded outputs (no calls, no tokens).">
          Re-run from here
        </button>
      )}
    </section>
  );
}

function Attempt({ record }: { record: NodeRecord }) {
  const cost = record.usage.cost ? ` · cost ${record.usage.cost}` : "";
  return (
    <div className="node-attempt" data-testid="node-attempt" data-status={record.status}>
      <div className="small">
        <span className={`pill st-${record.status === "reused" ? "completed" : record.status}`}>{record.status}</span>{" "}
        attempt {record.attempt} · {record.usage.tokens} tokens{cost} · {record.duration_ms} ms
        {record.reused_from && <span className="muted"> · from run {record.reused_from.slice(0, 8)}</span>}
      </div>
      {record.error && <p className="error">{record.error.code}: {record.error.message}</p>}
      {record.inputs.map((v, i) => <ValueBox key={i} label={`Input from ${v.source}`} value={v} />)}
      {record.output && <ValueBox label={`Output → ${record.output.port}`} value={record.output} testId="node-output" />}
    </div>
  );
}

function ValueBox({ label, value, testId }: { label: string; value: RecordedValue; testId?: string }) {
  const rows = tableRows(value.value);
  const [view, setView] = useState<View>(typeof value.value === "string" ? "text" : "json");
  const shown = view === "text" ? asText(value.value) : JSON.stringify(value.value, null, 2);
  const copy = () => { void navigator.clipboard?.writeText(shown); };
  return (
    <div className="value-box">
      <div className="row small">
        <strong>{label}</strong> <span className="muted">({value.type})</span>
        {(["json", "text", ...(rows ? ["table"] as const : [])] as View[]).map((v) => (
          <button key={v} type="button" className={"link" + (view === v ? " active" : "")}
                  aria-pressed={view === v} onClick={() => setView(v)}>{v.toUpperCase()}</button>
        ))}
        <button type="button" className="link" onClick={copy} aria-label={`Copy ${label}`}>Copy</button>
      </div>
      {value.truncated && <p className="muted small">Cut at the record limit (64 KiB).</p>}
      {value.redacted && <p className="muted small">Secrets were redacted.</p>}
      {view === "table" && rows ? <ValueTable rows={rows} /> : <pre data-testid={testId}>{shown}</pre>}
    </div>
  );
}

/** A list of objects (chat turns, documents, JSON rows) as rows, else null. */
export function tableRows(value: unknown): Record<string, unknown>[] | null {
  if (Array.isArray(value) && value.length > 0 && value.every((v) => v !== null && typeof v === "object" && !Array.isArray(v))) {
    return value as Record<string, unknown>[];
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return [value as Record<string, unknown>];
  return null;
}

/** A value as people read it: text as is, turns and documents by their text. */
export function asText(value: unknown): string {
  if (typeof value === "string") return value;
  const rows = Array.isArray(value) ? tableRows(value) : null;
  if (rows && rows.every((r) => typeof (r.content ?? r.text) === "string")) {
    return rows.map((r) => (r.role ? `${String(r.role)}: ` : "") + String(r.content ?? r.text)).join("\n");
  }
  return JSON.stringify(value);
}

function ValueTable({ rows }: { rows: Record<string, unknown>[] }) {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  return (
    <table className="value-table">
      <thead><tr>{columns.map((c) => <th key={c}>{c}</th>)}</tr></thead>
      <tbody>{rows.map((r, i) => <tr key={i}>{columns.map((c) => <td key={c}>{c in r ? cell(r[c]) : ""}</td>)}</tr>)}</tbody>
    </table>
  );
}
