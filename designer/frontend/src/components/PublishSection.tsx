// Publishing the saved revision: the design's "require a passing evaluation" setting,
// release notes, the passing evaluation to publish with, and the publish itself (its
// answer, the quality gate's 409 included, through the tab's shared answer).
import { useEffect, useState } from "react";
import { api } from "../api";
import { forgetResources } from "../resources";
import type { Design } from "../types";
import { ranEveryCase, type Evaluation } from "./EvaluationView";
import type { Act } from "./lifecycleAnswer";
import type { Version } from "./VersionList";

// A publish's answer: the version, and for an unchanged behaviour (200) why nothing new was published.
interface Published extends Version { created?: boolean; message?: string }

interface Props {
  design: Design;
  dirty: boolean;
  canEdit: boolean;
  busy: boolean;
  act: Act;
  /** The design's newest evaluation, if any. */
  evaluation: Evaluation | null;
  /** Reads the design's versions again (a publish added one). */
  onPublished: () => Promise<unknown>;
  /** The design as a settings change answered it (same revision: unsaved canvas edits stay). */
  onDesign?: (design: Design) => void;
}

export function PublishSection({ design, dirty, canEdit, busy, act, evaluation, onPublished,
                                 onDesign }: Props) {
  const base = `/agent-designs/${design.id}`;
  const [notes, setNotes] = useState("");
  const [useEvaluation, setUseEvaluation] = useState(true);
  // A new evaluation is offered checked, whatever was chosen for the one before.
  useEffect(() => { setUseEvaluation(true); }, [evaluation?.id]);

  const passing = evaluation && evaluation.status === "completed" && evaluation.passed
    && ranEveryCase(evaluation) && evaluation.revision === design.revision ? evaluation : null;
  const staffGate = design.require_evaluation_by_staff === true;

  const publish = () => act("Publish", async () => {
    const body: Record<string, unknown> = { revision: design.revision, notes };
    if (passing && useEvaluation) body.evaluation_id = passing.id;
    const v = await api<Published>("POST", `${base}/publish`, body);
    forgetResources();
    await onPublished();
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

  return (<>
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
  </>);
}
