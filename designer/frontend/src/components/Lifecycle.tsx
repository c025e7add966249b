// Test cases, evaluation, publish and versions of the saved revision. Each part reads its
// route when the tab opens; a route this server does not have (404) says so instead of
// failing, and every refusal (the quality gate's 409 included) is shown as answered
// (lifecycleAnswer: one answer and one busy flag for the tab's sections).
import { useCallback, useEffect, useRef, useState } from "react";
import { api, isMissingRoute } from "../api";
import type { Design } from "../types";
import { AgentTriggers } from "./AgentTriggers";
import { CanarySection } from "./CanarySection";
import { ACTIVE, EvaluationView, type Evaluation } from "./EvaluationView";
import { AnswerView, explain, useAnswer } from "./lifecycleAnswer";
import { PublishSection } from "./PublishSection";
import { TestCases, type TestCase } from "./TestCases";
import { VersionList, type Version } from "./VersionList";

interface Props {
  design: Design;
  dirty: boolean;
  canEdit: boolean;
  /** The design as a settings change answered it (same revision: unsaved canvas edits stay). */
  onDesign?: (design: Design) => void;
}

type Case = TestCase;
interface Fixtures { revision: number; cases: Case[] }

const POLL_MS = 600;

interface RolledBack { name: string; version: number; rollouts: { content_sha256: string }[] }

/** The design's deployed agent (the one running one of its versions now), if any. */
function agentOf(versions: Version[] | "unavailable" | null): string | null {
  if (!versions || versions === "unavailable") return null;
  const found = versions.flatMap((v) => v.deployments ?? []).find((d) => d.current && d.agent_id);
  return found?.agent_id ?? null;
}

export function Lifecycle({ design, dirty, canEdit, onDesign }: Props) {
  const base = `/agent-designs/${design.id}`;
  const [fixtures, setFixtures] = useState<Fixtures | "unavailable" | null>(null);
  const [proposals, setProposals] = useState<Case[] | null>(null);
  const [evaluation, setEvaluation] = useState<Evaluation | null>(null);
  const [versions, setVersions] = useState<Version[] | "unavailable" | null>(null);
  const { answer, setAnswer, busy, act } = useAnswer();
  const live = useRef(true);
  useEffect(() => () => { live.current = false; }, []);

  const loadFixtures = useCallback(() => api<Fixtures>("GET", `${base}/fixtures`).then(
    (f) => live.current && setFixtures(f),
    (e) => live.current && (isMissingRoute(e) ? setFixtures("unavailable") : setAnswer(explain("Test cases", e)))), [base]);
  const loadVersions = useCallback(() => api<{ versions: Version[] }>("GET", `${base}/versions`).then(
    (d) => live.current && setVersions(d.versions),
    (e) => live.current && (isMissingRoute(e) ? setVersions("unavailable") : setAnswer(explain("Versions", e)))), [base]);

  const agentId = agentOf(versions);

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
    return null;
  });
  const rollback = (agentId: string, agentName: string) => act(`Roll back ${agentName}`, async () => {
    const a = await api<RolledBack>("POST", `/agents/${agentId}/rollback`);
    await loadVersions();
    return [`Agent ${a.name} now runs version ${a.version} again (behaviour `
            + `${(a.rollouts[0]?.content_sha256 ?? "").slice(0, 12)}, hash verified).`];
  });

  const cases = fixtures && fixtures !== "unavailable" ? fixtures.cases : [];
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

      <PublishSection design={design} dirty={dirty} canEdit={canEdit} busy={busy} act={act}
                      evaluation={evaluation} onPublished={loadVersions} onDesign={onDesign} />
      {answer && <AnswerView answer={answer} />}

      <h3>Versions</h3>
      <VersionList versions={versions} busy={busy} onRollback={canEdit ? rollback : undefined} />
      {agentId && Array.isArray(versions) && (
        <CanarySection agentId={agentId} versions={versions} canEdit={canEdit} busy={busy} act={act}
                       onVersions={loadVersions} />)}
      {Array.isArray(versions) && versions.flatMap((v) => v.deployments ?? [])
        .filter((d) => d.current && d.agent_id).map((d) => (
          <AgentTriggers key={d.agent_id} agentId={d.agent_id as string} agentName={d.agent_name}
                         canEdit={canEdit} />))}
    </section>
  );
}
