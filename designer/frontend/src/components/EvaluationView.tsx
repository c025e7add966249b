// An evaluation's progress and verdict in words: what it waits on, who judged, which cases failed.

export interface InFlight {
  case_id: string; name: string; stage: "run" | "judge"; run_id: string | null;
  run_status: string | null; nodes: string[];
}
/** The judge an evaluation recorded at its start, and who chose its model: the operator (a
 * platform model) or the project (one of its model resources, at `destination`). */
export interface Judge {
  backend: string; model: string; rubric_version: string;
  chosen_by?: "operator" | "project"; destination?: string | null;
}
export interface Evaluation {
  id: string; revision: number | null; gate: boolean; status: string; passed: boolean | null;
  judge?: Judge;
  all_cases?: boolean; design_cases?: number | null;
  content_sha256: string;
  progress: { done: number; total: number; queued?: number; in_flight?: InFlight[] };
  counts: { total: number; passed: number; failed: number; cancelled: number };
  error?: { message?: string } | null;
  cases?: CaseResult[];
}
/** One case's result (GET /agent-evaluations/{id}), with the case as it ran (`expected`). */
export interface CaseResult {
  case_id: string; name: string; status: string; reason?: string | null;
  input?: string; output?: string | null; completed_calls?: string[]; path?: string[];
  judge_scores?: Record<string, number>; judge_reason?: string;
  expected?: { calls?: string[]; judge?: { criteria: string[]; reference?: string | null; min_score: number } | null };
}
export const ACTIVE = new Set(["queued", "running"]);
// Only an evaluation that ran every case may open the quality gate (with or without `gate`).
export const ranEveryCase = (e: Evaluation) => e.all_cases ?? e.gate;

// What a running evaluation waits on, in words: each case in flight and where its run is.
export function waitingOn(e: Evaluation): string[] {
  if (!ACTIVE.has(e.status)) return [];
  const lines = (e.progress.in_flight ?? []).map((c) => {
    const what = c.stage === "judge" ? "judging" : "running";
    const run = c.run_id ? ` (run ${c.run_id.slice(0, 8)})` : "";
    if (c.run_status === "waiting") {
      return `Case "${c.name}" waits for a person at ${c.nodes.join(", ") || "an approval"}${run}.`;
    }
    if (!c.nodes.length) return `Case "${c.name}": ${what}, waiting for the runner to start it${run}.`;
    return `Case "${c.name}": ${what} ${c.nodes.join(", ")}${run}.`;
  });
  const queued = e.progress.queued ?? 0;
  if (queued) lines.push(`${queued} case${queued === 1 ? "" : "s"} waiting for a runner slot.`);
  return lines;
}

// Who judged, in words: the model, and who chose it (a staff gate takes only the operator's).
export function judgeLine(j: Judge): string {
  const model = j.chosen_by === "project" ? j.model : `${j.model} on ${j.backend}`;
  const who = j.chosen_by === "project"
    ? `chosen by the project${j.destination ? `, at ${j.destination}` : ""}`
    : j.chosen_by === "operator" ? "chosen by the operator" : "";
  return `Judge: ${model}${who ? ` (${who})` : ""}.`;
}

export function EvaluationView({ evaluation: e, revision }: { evaluation: Evaluation; revision: number }) {
  const failed = (e.cases ?? []).filter((c) => c.status === "failed");
  const verdict = ACTIVE.has(e.status) ? e.status
    : e.status === "completed" ? (e.passed ? "passed" : "failed") : e.status;
  return (
    <div className={`evaluation ev-${verdict}`} data-testid="evaluation" data-status={e.status}
         data-verdict={verdict} data-done={e.progress.done} data-total={e.progress.total}
         role="status" aria-live="polite">
      <div className="row">
        <strong>{verdict}</strong>
        <span className="muted small">{e.id.slice(0, 8)} · revision {e.revision ?? "?"}{e.revision !== revision ? " (not the saved one)" : ""}{ranEveryCase(e) ? " · all cases" : ""}</span>
      </div>
      <progress max={Math.max(e.progress.total, 1)} value={e.progress.done}
                aria-label={`${e.progress.done} of ${e.progress.total} cases done`} />
      <div className="small">{e.progress.done}/{e.progress.total} done · {e.counts.passed} passed · {e.counts.failed} failed{e.counts.cancelled ? ` · ${e.counts.cancelled} cancelled` : ""}</div>
      {e.judge && (
        <div className="small muted" data-testid="evaluation-judge" data-chosen-by={e.judge.chosen_by ?? ""}>
          {judgeLine(e.judge)}
        </div>
      )}
      {waitingOn(e).length > 0 && (
        <ul className="small muted" data-testid="evaluation-waiting">
          {waitingOn(e).map((line) => <li key={line}>{line}</li>)}
        </ul>
      )}
      {e.error?.message && <p className="issue error small">{e.error.message}</p>}
      {failed.length > 0 && (
        <ul className="small">{failed.slice(0, 5).map((c) => <li key={c.case_id}>{c.name}: {c.reason ?? "failed"}</li>)}</ul>
      )}
      {(e.cases ?? []).length > 0 && <CaseResults cases={e.cases!} />}
    </div>
  );
}

/** Each case's output, path and judge scores next to what it expected. */
export function CaseResults({ cases }: { cases: CaseResult[] }) {
  return (
    <table className="case-results small" data-testid="case-results">
      <thead><tr><th>Case</th><th>Got</th><th>Expected</th></tr></thead>
      <tbody>{cases.map((c) => {
        const judge = c.expected?.judge;
        const scores = Object.entries(c.judge_scores ?? {});
        return (
          <tr key={c.case_id} data-testid="case-result" data-case-id={c.case_id} data-status={c.status}>
            <td><strong>{c.name}</strong><div className="muted">{c.status}{c.reason ? `: ${c.reason}` : ""}</div></td>
            <td>
              <div data-testid="case-output">output: {c.output ?? "—"}</div>
              <div className="muted">path: {(c.path ?? []).join(" → ") || "—"}</div>
              {scores.length > 0 && <div data-testid="case-scores">scores: {scores.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}</div>}
              {c.judge_reason && <div className="muted">judge: {c.judge_reason}</div>}
            </td>
            <td>
              {judge?.reference && <div data-testid="case-expected-answer">answer: {judge.reference}</div>}
              <div className="muted">calls: {(c.expected?.calls ?? []).join(" → ") || "—"}{(c.expected?.calls ?? []).length ? ` (${(c.completed_calls ?? []).length} completed)` : ""}</div>
              {judge && <div>criteria: {judge.criteria.join(", ")} ≥ {judge.min_score}</div>}
            </td>
          </tr>
        );
      })}</tbody>
    </table>
  );
}
