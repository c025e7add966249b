// Test cases, evaluation, publish and versions of the saved revision. Each part reads its
// route when the tab opens; a route this server does not have (404) says so instead of
// failing, and every refusal (the quality gate's 409 included) is shown as answered.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, ApiError, isMissingRoute } from "../api";
import { forgetResources } from "../resources";
import type { Design } from "../types";
import { AgentTriggers } from "./AgentTriggers";
import { ACTIVE, EvaluationView, ranEveryCase, type Evaluation } from "./EvaluationView";
import { TestCases, type TestCase } from "./TestCases";
import { VersionList, type Version } from "./VersionList";
import { CanaryPanel, type CanaryAgent, type VersionTotals } from "./CanaryPanel";

interface Props {
  design: Design;
  dirty: boolean;
  canEdit: boolean;
  /** The design as a settings change answered it (same revision: unsaved canvas edits stay). */
  onDesign?: (design: Design) => void;
}

type Case = TestCase;
interface Fixtures { revision: number; cases: Case[] }
// A publish's answer: the version, and for an unchanged behaviour (200) why nothing new was published.
interface Published extends Version { created?: boolean; message?: string }
interface Answer { title: string; ok: boolean; lines: string[] }

const POLL_MS = 600;

interface RolledBack { name: string; version: number; rollouts: { content_sha256: string }[] }
interface AgentOperations { agent: CanaryAgent; versions: VersionTotals[] }
const CANARY_HOURS = 24;

/** The design's deployed agent (the one running one of its versions now), if any. */
function agentOf(versions: Version[] | "unavailable" | null): string | null {
  if (!versions || versions === "unavailable") return null;
  const found = versions.flatMap((v) => v.deployments ?? []).find((d) => d.current && d.agent_id);
  return found?.agent_id ?? null;
}

/** The agent's pod settings, sent again with a canary deploy (the body's defaults would resize it). */
function pickSettings(settings: Record<string, unknown> | undefined): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const k of ["autoscaling", "resources", "require_evaluation"]) {
    if (settings && k in settings) kept[k] = settings[k];
  }
  return kept;
}

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
  const [operations, setOperations] = useState<AgentOperations | null>(null);
  const [canaryPercent, setCanaryPercent] = useState("10");
  const [canaryChoice, setCanaryChoice] = useState("");
  const live = useRef(true);
  useEffect(() => () => { live.current = false; }, []);

  const loadFixtures = useCallback(() => api<Fixtures>("GET", `${base}/fixtures`).then(
    (f) => live.current && setFixtures(f),
    (e) => live.current && (isMissingRoute(e) ? setFixtures("unavailable") : setAnswer(explain("Test cases", e)))), [base]);
  const loadVersions = useCallback(() => api<{ versions: Version[] }>("GET", `${base}/versions`).then(
    (d) => live.current && setVersions(d.versions),
    (e) => live.current && (isMissingRoute(e) ? setVersions("unavailable") : setAnswer(explain("Versions", e)))), [base]);

  const agentId = agentOf(versions);
  const loadOperations = useCallback(() => {
    if (!agentId) return Promise.resolve();
    return api<AgentOperations>("GET", `/agents/${agentId}/operations?hours=${CANARY_HOURS}`).then(
      (o) => live.current && setOperations(o), () => undefined);
  }, [agentId]);
  useEffect(() => { void loadOperations(); }, [loadOperations]);

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
  const rollback = (agentId: string, agentName: string) => act(`Roll back ${agentName}`, async () => {
    const a = await api<RolledBack>("POST", `/agents/${agentId}/rollback`);
    await loadVersions();
    return [`Agent ${a.name} now runs version ${a.version} again (behaviour `
            + `${(a.rollouts[0]?.content_sha256 ?? "").slice(0, 12)}, hash verified).`];
  });

  const startCanary = (versionId: string, percent: number) => act("Canary", async () => {
    const a = await api<CanaryAgent>("POST", `/agent-versions/${versionId}/deploy`, {
      ...pickSettings(operations?.agent.settings), canary_percent: percent });
    await loadVersions();
    await loadOperations();
    return [`Canary v${a.canary?.version} serves ${a.canary?.percent} % of agent ${a.name}'s turns; `
            + `v${a.version} serves the rest.`];
  });
  const promoteCanary = () => act("Promote", async () => {
    const a = await api<CanaryAgent>("POST", `/agents/${agentId}/promote`);
    await loadVersions();
    await loadOperations();
    return [`Agent ${a.name} now runs version ${a.version} (canary promoted, hash verified).`];
  });
  const rollbackCanary = () => act("Roll back the canary", async () => {
    const a = await api<CanaryAgent>("POST", `/agents/${agentId}/rollback`);
    await loadVersions();
    await loadOperations();
    return [`The canary ended; agent ${a.name} runs version ${a.version} alone.`];
  });

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
          <TestCases designId={design.id} cases={cases} canEdit={canEdit} onChanged={loadFixtures}
                     onError={(title, e) => setAnswer(explain(title, e))} />
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
      <VersionList versions={versions} busy={busy} onRollback={canEdit ? rollback : undefined} />
      {operations && versions && versions !== "unavailable" && (<>
        <h3>Canary</h3>
        <CanaryPanel agent={operations.agent} totals={operations.versions}
                     versions={versions.map((v) => ({ id: v.id, number: v.number }))}
                     percent={canaryPercent} onPercent={setCanaryPercent}
                     choice={canaryChoice} onChoice={setCanaryChoice} busy={busy} canEdit={canEdit}
                     onStart={startCanary} onPromote={promoteCanary} onRollback={rollbackCanary} />
      </>)}
      {Array.isArray(versions) && versions.flatMap((v) => v.deployments ?? [])
        .filter((d) => d.current && d.agent_id).map((d) => (
          <AgentTriggers key={d.agent_id} agentId={d.agent_id as string} agentName={d.agent_name}
                         canEdit={canEdit} />))}
    </section>
  );
}
