// A node of the run on screen (live or past): every attempt's inputs, output and port,
// error, tokens, cost and time, from its records (GET …/runs/{run}/nodes/{node}), in
// JSON, text or table views with copy; "Re-run from here"; and "Pin output" (design runs
// repeat a pinned output instead of running the node).
import { useEffect, useState } from "react";
import { api, ApiError } from "../api";
import type { NodeRun } from "../context";
import type { NodeRecord, OutputPin, RecordedValue } from "../types";

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
  /** The node's pinned output, if any. */
  pin?: OutputPin;
  /** Pin a recorded output (editors): the button shows only when given. */
  onPin?: (port: string, value: unknown) => void;
  onUnpin?: () => void;
}

export function NodeRecords({ designId, runId, nodeId, state, runEnded, canEdit, onRerun, pin, onPin, onUnpin }: Props) {
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
      {pin && <PinnedNote pin={pin} onUnpin={canEdit ? onUnpin : undefined} />}
      {attempts?.map((a) => <Attempt key={a.attempt} record={a} onPin={canEdit ? onPin : undefined} />)}
      {canEdit && runEnded && (
        <button type="button" onClick={onRerun} title="Run this node and everything after it again; the nodes before it repeat this run's recorded outputs (no calls, no tokens).">
          Re-run from here
        </button>
      )}
    </section>
  );
}

/** The node's pinned output: design runs repeat it instead of running the node. */
export function PinnedNote({ pin, onUnpin }: { pin: OutputPin; onUnpin?: () => void }) {
  return (
    <div className="pinned-note small" data-testid="pinned-output">
      <strong>Output pinned</strong> on {pin.port}: design runs repeat it instead of running this node
      (versions, evaluations and deployed agents always run it).
      <pre>{asText(pin.value)}</pre>
      {onUnpin && <button type="button" onClick={onUnpin}>Unpin</button>}
    </div>
  );
}

function Attempt({ record, onPin }: { record: NodeRecord; onPin?: (port: string, value: unknown) => void }) {
  const output = record.output;
  const exact = output && !output.truncated && !output.redacted;
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
      {output && <ValueBox label={`Output → ${output.port}`} value={output} testId="node-output" />}
      {output && onPin && (
        <button type="button" disabled={!exact} onClick={() => onPin(output.port, output.value)}
                title={exact ? "Design runs repeat this output instead of running the node (no call, no tokens)."
                  : "An output cut at the record limit or redacted cannot be pinned."}>
          Pin output
        </button>
      )}
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
