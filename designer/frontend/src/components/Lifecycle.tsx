// Test cases, evaluation, publish and versions of the saved revision. Each part reads its
// route when the tab opens; a route this server does not have (404) says so instead of
// failing, and every refusal (the quality gate's 409 included) is shown as answered.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, ApiError, isMissingRoute } from "../api";
import { forgetResources } from "../resources";
import type { Design } from "../types";

interface Props {
  design: Design;
  dirty: boolean;
  canEdit: boolean;
  /** The design as a settings change answered it (same revision: unsaved canvas edits stay). */
  onDesign?: (design: Design) => void;
}

interface Case { id?: string; name: string; input: string }
interface Fixtures { revision: number; cases: Case[] }
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
  cases?: { case_id: string; name: string; status: string; reason?: string | null }[];
}
interface Version {
  id: string; number: number; content_sha256: string; created_at: string; notes?: string;
  author?: string | null; deployments?: { agent_name: string; current: boolean }[];
}
// A publish's answer: the version, and for an unchanged behaviour (200) why nothing new was published.
interface Published extends Version { created?: boolean; message?: string }
interface Answer { title: string; ok: boolean; lines: string[] }

const ACTIVE = new Set(["queued", "running"]);
// Only an evaluation that ran every case may open the quality gate (with or without `gate`).
const ranEveryCase = (e: Evaluation) => e.all_cases ?? e.gate;
const POLL_MS = 600;

function explain(title: string, e: unknown): Answer {
  if (isMissingRoute(e)) return { title, ok: false, lines: ["Not available on this server yet."] };
  if (e instanceof ApiError) {
    const details = Object.entries(e.details).map(([k, v]) => {
      const text = typeof v === "string" ? v : JSON.stringify(v);
      return `${k}: ${/^[0-9a-f]{64}$/.test(text) ? text.slice(0, 12) + "…" : text}`;
    });
    const hint = e.code === "quality_gate"
      ? ["Evaluate this revision (all cases); once it passes, publish with it."] : [];
    return { title: e.code === "quality_gate" ? `${title}: refused by the quality gate` : title,
             ok: false, lines: [`${e.status} ${e.code}: ${e.message}`, ...details, ...hint] };
  }
  return { title, ok: false, lines: [String(e)] };
}

export function Lifecycle({ design, dirty, canEdit, onDesign }: Props) {
  const base = `/agent-designs/${design.id}`;
  const [fixtures, setFixtures] = useState<Fixtures | "unavailable" | null>(null);
  const [proposals, setProposals] = useState<Case[] | null>(null);
  const [evaluation, setEvaluation] = useState<Evaluation | null>(null);
  const [versions, setVersions] = useState<Version[] | "unavailable" | null>(null);
  const [useEvaluation, setUseEvaluation] = useState(true);
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [busy, setBusy] = useState(false);
  const [notes, setNotes] = useState("");
  const live = useRef(true);
  useEffect(() => () => { live.current = false; }, []);

  const loadFixtures = useCallback(() => api<Fixtures>("GET", `${base}/fixtures`).then(
    (f) => live.current && setFixtures(f),
    (e) => live.current && (isMissingRoute(e) ? setFixtures("unavailable") : setAnswer(explain("Test cases", e)))), [base]);
  const loadVersions = useCallback(() => api<{ versions: Version[] }>("GET", `${base}/versions`).then(
    (d) => live.current && setVersions(d.versions),
    (e) => live.current && (isMissingRoute(e) ? setVersions("unavailable") : setAnswer(explain("Versions", e)))), [base]);

  useEffect(() => {
    void loadFixtures();
    void loadVersions();
    // The newest evaluation of this design, if any (it may still be running).
    api<{ evaluations: Evaluation[] }>("GET", `${base}/evaluations`).then(
      (d) => { if (live.current && d.evaluations[0]) setEvaluation(d.evaluations[0]); }, () => undefined);
  }, [base, loadFixtures, loadVersions]);

  // Follow a running evaluation until it ends.
  const evaluationId = evaluation?.id;
  const evaluationActive = evaluation ? ACTIVE.has(evaluation.status) : false;
  useEffect(() => {
    if (!evaluationId || !evaluationActive) return;
    const timer = window.setTimeout(() => {
      api<Evaluation>("GET", `/agent-evaluations/${evaluationId}`).then(
        (e) => live.current && setEvaluation(e),
        (e) => live.current && setAnswer(explain("Evaluation", e)));
    }, POLL_MS);
    return () => window.clearTimeout(timer);
  }, [evaluationId, evaluationActive, evaluation]);

  const act = async (title: string, fn: () => Promise<string[] | null>) => {
    setBusy(true);
    try {
      const lines = await fn();
      setAnswer(lines ? { title, ok: true, lines } : null);
    } catch (e) {
      setAnswer(explain(title, e));
    } finally {
      setBusy(false);
    }
  };

  const suggest = () => act("Suggested cases", async () => {
    const d = await api<{ suggestions: Case[] }>("POST", `${base}/fixtures/suggest`, {});
    setProposals(d.suggestions);
    return d.suggestions.length ? null : ["No input → output path to suggest a case for."];
  });
  const saveSuggested = () => act("Suggested cases", async () => {
    const revision = fixtures && fixtures !== "unavailable" ? fixtures.revision : 0;
    const d = await api<{ saved: Case[] }>("POST", `${base}/fixtures/suggest`, { save: true, revision });
    setProposals(null);
    await loadFixtures();
    return [`Saved ${d.saved.length} suggested case(s).`];
  });
  const evaluate = () => act("Evaluation", async () => {
    const started = await api<Evaluation>("POST", `${base}/evaluations`, { gate: true, revision: design.revision });
    setEvaluation(started);
    setUseEvaluation(true);
    return null;
  });
  const passing = evaluation && evaluation.status === "completed" && evaluation.passed
    && ranEveryCase(evaluation) && evaluation.revision === design.revision ? evaluation : null;
  const publish = () => act("Publish", async () => {
    const body: Record<string, unknown> = { revision: design.revision, notes };
    if (passing && useEvaluation) body.evaluation_id = passing.id;
    const v = await api<Published>("POST", `${base}/publish`, body);
    forgetResources();
    await loadVersions();
    if (v.created === false) {
      return [v.message ?? `Nothing new was published: version ${v.number} has the same behaviour.`];
    }
    return [`Version ${v.number} published (behaviour ${v.content_sha256.slice(0, 12)})`
            + (body.evaluation_id ? " with its passing evaluation." : ".")];
  });

  // A design setting, not part of a revision: the PUT sends no graph, so it makes none.
  const setRequireEvaluation = (on: boolean) => act("Publish settings", async () => {
    const saved = await api<Design>("PUT", base, { revision: design.revision, require_evaluation: on });
    onDesign?.(saved);
    return [saved.require_evaluation
      ? "Publishing now requires a passing evaluation of every case of the revision."
      : "Publishing no longer requires an evaluation."];
  });

  const cases = fixtures && fixtures !== "unavailable" ? fixtures.cases : [];
  const staffGate = design.require_evaluation_by_staff === true;
  return (
    <section className="lifecycle" aria-label="Publish">
      <h2>Test &amp; publish</h2>
      <p className="muted small">These act on the saved revision {design.revision}{dirty ? " — save first to include your changes" : ""}.</p>

      <h3>Test cases</h3>
      {fixtures === "unavailable" ? <p className="muted small">Not available on this server yet.</p> : (
        <div data-testid="fixtures" data-count={cases.length}>
          <p className="small">{fixtures === null ? "loading…" : `${cases.length} case(s)${fixtures.revision ? `, revision ${fixtures.revision}` : ""}.`}</p>
          {cases.length > 0 && <ul className="cases small">{cases.slice(0, 12).map((c) => (
            <li key={c.id ?? c.name} title={c.input}>{c.name}</li>))}{cases.length > 12 && <li>…</li>}</ul>}
          <div className="row">
            <button type="button" onClick={suggest} disabled={busy}>Suggest test cases</button>
          </div>
          {proposals && proposals.length > 0 && (
            <div className="proposals" data-testid="proposals">
              <ul className="cases small">{proposals.map((c) => <li key={c.name} title={c.input}>{c.name}</li>)}</ul>
              <button type="button" onClick={saveSuggested} disabled={busy || !canEdit}>
                Save {proposals.length} suggested case{proposals.length === 1 ? "" : "s"}
              </button>
            </div>
          )}
        </div>
      )}

      <h3>Evaluation</h3>
      <button type="button" onClick={evaluate} disabled={busy || !canEdit || dirty || evaluationActive || !cases.length}
              title={cases.length ? "Run every case against the saved revision" : "Add test cases first"}>
        Evaluate revision {design.revision}
      </button>
      {evaluation && <EvaluationView evaluation={evaluation} revision={design.revision} />}

      <h3>Publish</h3>
      <label className="check small">
        <input type="checkbox" checked={design.require_evaluation} disabled={busy || !canEdit || staffGate}
               onChange={(e) => setRequireEvaluation(e.target.checked)} />
        {" "}Require a passing evaluation to publish
      </label>
      {design.require_evaluation && (
        <p className="note small" data-testid="gate-note">{staffGate
          ? "Staff require a passing evaluation of the revision, judged by the operator's model, to publish this design; only staff can switch this off."
          : "This design requires a passing evaluation of the revision to publish."}</p>
      )}
      <label htmlFor="publish-notes">Release notes</label>
      <input id="publish-notes" value={notes} onChange={(e) => setNotes(e.target.value)} />
      {passing && (
        <label className="check small">
          <input type="checkbox" checked={useEvaluation} onChange={(e) => setUseEvaluation(e.target.checked)} />
          {" "}with evaluation {passing.id.slice(0, 8)} (passed, {passing.counts.passed}/{passing.counts.total}
          {passing.judge?.chosen_by === "project" ? ", judged by the project's model" : ""})
        </label>
      )}
      <button type="button" className="primary" onClick={publish} disabled={busy || !canEdit || dirty}>
        Publish revision {design.revision}
      </button>
      {answer && (
        <div className={"answer " + (answer.ok ? "ok" : "bad")} role={answer.ok ? "status" : "alert"}
             data-testid="lifecycle-answer">
          <h4>{answer.title}</h4>
          {answer.lines.map((l, i) => <p key={i}>{l}</p>)}
        </div>
      )}

      <h3>Versions</h3>
      {versions === "unavailable" ? <p className="muted small">Not available on this server yet.</p>
        : versions === null ? <p className="muted small">loading…</p>
        : !versions.length ? <p className="muted small" data-testid="versions">No versions yet.</p> : (
          <ol className="versions small" data-testid="versions">
            {versions.map((v) => (
              <li key={v.id}>
                <strong>v{v.number}</strong> <code>{v.content_sha256.slice(0, 12)}</code>
                {" · "}{new Date(v.created_at).toLocaleString()}{v.author ? ` · ${v.author}` : ""}
                {v.notes ? <div className="muted">{v.notes}</div> : null}
                {v.deployments?.length ? <div className="muted">deployed: {v.deployments.map((d) =>
                  d.agent_name + (d.current ? " (current)" : "")).join(", ")}</div> : null}
              </li>
            ))}
          </ol>
        )}
    </section>
  );
}

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
    </div>
  );
}
