import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { EvaluationView, waitingOn, type Evaluation } from "./EvaluationView";
import { Lifecycle } from "./Lifecycle";
import type { Design } from "../types";
import { serve } from "../test/serve";

const design: Design = {
  id: "d1", project_id: 1, name: "Agent", description: "", revision: 3, require_evaluation: false,
  created_at: "2026-12-01T10:00:00Z", updated_at: "2026-12-01T10:00:00Z",
  graph: { schema_version: 2, nodes: [], edges: [] },
  validation: { runnable: true, issues: [], content_sha256: "a".repeat(64) }, revisions: [],
};

function evaluation(over: Record<string, unknown>) {
  return {
    id: "e1234567-0000-0000-0000-000000000000", revision: 3, gate: false, status: "completed",
    passed: true, content_sha256: "a".repeat(64), progress: { done: 2, total: 2 },
    counts: { total: 2, passed: 2, failed: 0, cancelled: 0 }, all_cases: true, design_cases: 2,
    ...over,
  };
}


const base = "/api/v1/agent-designs/d1";
const reads = (latest: unknown): Record<string, [number, unknown]> => ({
  [`GET ${base}/fixtures`]: [200, { revision: 1, cases: [{ id: "c0", name: "c0", input: "x" }] }],
  [`GET ${base}/versions`]: [200, { versions: [] }],
  [`GET ${base}/evaluations`]: [200, { evaluations: latest ? [latest] : [] }],
});

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

describe("Lifecycle (test & publish)", () => {
  it("offers a passing evaluation of every case started without gate, and says when nothing new was published", async () => {
    const message = "Nothing new was published: revision 3 has the same behaviour as version 2 "
      + "(content_sha256 aaaaaaaaaaaa…), which is returned. Version 2 carries no evaluation summary; "
      + "evaluation e1234567-0000-0000-0000-000000000000 was not attached (a published version never changes).";
    const calls = serve({
      ...reads(evaluation({})),
      [`POST ${base}/publish`]: [200, { id: "v2", number: 2, content_sha256: "a".repeat(64),
                                        created_at: "2026-12-01T10:00:00Z", created: false, message }],
    });
    render(<Lifecycle design={design} dirty={false} canEdit={true} />);
    const use = await screen.findByRole("checkbox", { name: /with evaluation e1234567/ });
    expect((use as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Publish revision 3" }));
    const answer = await screen.findByTestId("lifecycle-answer");
    expect(answer.textContent).toContain(message);
    expect(answer.textContent).not.toContain("published (behaviour");
    const sent = calls.find((c) => c.method === "POST")!;
    expect(sent.body).toEqual({ revision: 3, notes: "", evaluation_id: "e1234567-0000-0000-0000-000000000000" });
  });

  it("rolls the design's agent back and says to which version", async () => {
    const at = "2026-12-01T10:00:00Z";
    const versions = [
      { id: "v2", number: 2, content_sha256: "b".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "agent-1", current: true }] },
      { id: "v1", number: 1, content_sha256: "a".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "agent-1", current: false }] },
    ];
    const calls = serve({
      ...reads(null), [`GET ${base}/versions`]: [200, { versions }],
      ["POST /api/v1/agents/a1/rollback"]: [200, { id: "a1", name: "agent-1", version: 1,
                                                   rollouts: [{ content_sha256: "a".repeat(64) }] }],
    });
    render(<Lifecycle design={design} dirty={false} canEdit={true} />);
    fireEvent.click(await screen.findByRole("button", { name: "Roll back agent-1" }));
    expect((await screen.findByTestId("lifecycle-answer")).textContent)
      .toContain("Agent agent-1 now runs version 1 again (behaviour aaaaaaaaaaaa, hash verified).");
    expect(calls.filter((c) => c.method === "POST").map((c) => c.url))
      .toEqual(["/api/v1/agents/a1/rollback"]);
  });

  it("shows a refused rollback and offers none to viewers", async () => {
    const at = "2026-12-01T10:00:00Z";
    const versions = [
      { id: "v2", number: 2, content_sha256: "b".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "agent-1", current: true }] },
      { id: "v1", number: 1, content_sha256: "a".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "agent-1", current: false }] },
    ];
    serve({
      ...reads(null), [`GET ${base}/versions`]: [200, { versions }],
      ["POST /api/v1/agents/a1/rollback"]: [409, { error: { code: "hash_mismatch",
        message: "Version 1's stored artifact does not hash to the content_sha256.", details: {} } }],
    });
    render(<Lifecycle design={design} dirty={false} canEdit={true} />);
    fireEvent.click(await screen.findByRole("button", { name: "Roll back agent-1" }));
    expect((await screen.findByTestId("lifecycle-answer")).textContent).toContain("409 hash_mismatch");
    cleanup();
    render(<Lifecycle design={design} dirty={false} canEdit={false} />);
    await screen.findAllByText(/deployed: agent-1/);
    expect(screen.queryByRole("button", { name: /Roll back/ })).toBeNull();
  });

  it("reports a new version as published", async () => {
    serve({
      ...reads(null),
      [`POST ${base}/publish`]: [201, { id: "v3", number: 3, content_sha256: "b".repeat(64),
                                        created_at: "2026-12-01T10:00:00Z", created: true }],
    });
    render(<Lifecycle design={design} dirty={false} canEdit={true} />);
    await screen.findByText("No versions yet.");
    fireEvent.click(screen.getByRole("button", { name: "Publish revision 3" }));
    expect((await screen.findByTestId("lifecycle-answer")).textContent)
      .toContain("Version 3 published (behaviour bbbbbbbbbbbb).");
  });

  it("does not offer an evaluation of a chosen subset of the cases", async () => {
    serve(reads(evaluation({ all_cases: false, counts: { total: 1, passed: 1, failed: 0, cancelled: 0 } })));
    render(<Lifecycle design={design} dirty={false} canEdit={true} />);
    await screen.findByTestId("evaluation");
    await waitFor(() => expect(screen.getByTestId("evaluation").textContent).not.toContain("all cases"));
    expect(screen.queryByRole("checkbox", { name: /with evaluation/ })).toBeNull();
  });

  it("lets an editor require an evaluation to publish, with a PUT that sends no graph", async () => {
    const saved = { ...design, require_evaluation: true };
    const calls = serve({ ...reads(null), [`PUT ${base}`]: [200, saved] });
    const onDesign = vi.fn();
    render(<Lifecycle design={design} dirty={true} canEdit={true} onDesign={onDesign} />);
    const toggle = await screen.findByRole("checkbox", { name: "Require a passing evaluation to publish" });
    expect((toggle as HTMLInputElement).checked).toBe(false);
    fireEvent.click(toggle);
    await waitFor(() => expect(onDesign).toHaveBeenCalledWith(saved));
    expect(calls.find((c) => c.method === "PUT")!.body).toEqual({ revision: 3, require_evaluation: true });
    expect((await screen.findByTestId("lifecycle-answer")).textContent)
      .toContain("Publishing now requires a passing evaluation");
  });

  it("says a staff gate is staff's, and lets no project editor switch it off", async () => {
    serve(reads(evaluation({ judge: { backend: "resource", model: "resource:house", rubric_version: "kionga-rubric-1",
                                      chosen_by: "project", destination: "judge.acme.test" } })));
    render(<Lifecycle design={{ ...design, require_evaluation: true, require_evaluation_by_staff: true }}
                      dirty={false} canEdit={true} />);
    const toggle = await screen.findByRole("checkbox", { name: "Require a passing evaluation to publish" });
    expect((toggle as HTMLInputElement).disabled).toBe(true);
    expect(screen.getByTestId("gate-note").textContent).toContain("judged by the operator's model");
    const use = await screen.findByRole("checkbox", { name: /with evaluation e1234567/ });
    expect(use.parentElement!.textContent).toContain("judged by the project's model");
  });

  it("shows the setting to viewers without letting them change it", async () => {
    serve(reads(null));
    render(<Lifecycle design={{ ...design, require_evaluation: true }} dirty={false} canEdit={false} />);
    const toggle = await screen.findByRole("checkbox", { name: "Require a passing evaluation to publish" });
    expect((toggle as HTMLInputElement).checked).toBe(true);
    expect((toggle as HTMLInputElement).disabled).toBe(true);
  });
});
const running: Evaluation = {
  id: "0123456789abcdef", revision: 3, gate: true, status: "running", passed: null,
  content_sha256: "x".repeat(64),
  progress: {
    done: 1, total: 4, queued: 1,
    in_flight: [
      { case_id: "refund", name: "Refund", stage: "run", run_id: "abcdef0123456789",
        run_status: "running", nodes: ["draft"] },
      { case_id: "ask", name: "Ask", stage: "run", run_id: "fedcba9876543210",
        run_status: "waiting", nodes: ["gate"] },
      { case_id: "new", name: "New", stage: "judge", run_id: "00000000aaaaaaaa",
        run_status: "queued", nodes: [] },
    ],
  },
  counts: { total: 4, passed: 1, failed: 0, cancelled: 0 },
};


describe("EvaluationView", () => {
  it("says what a running evaluation waits on", () => {
    expect(waitingOn(running)).toEqual([
      'Case "Refund": running draft (run abcdef01).',
      'Case "Ask" waits for a person at gate (run fedcba98).',
      'Case "New": judging, waiting for the runner to start it (run 00000000).',
      "1 case waiting for a runner slot.",
    ]);
    render(<EvaluationView evaluation={running} revision={3} />);
    const waiting = screen.getByTestId("evaluation-waiting");
    expect(waiting.textContent).toContain('Case "Refund": running draft');
  });

  it("shows who chose the judge with the verdict", () => {
    const judge = { backend: "resource", model: "resource:house", rubric_version: "kionga-rubric-1" };
    render(<EvaluationView evaluation={{ ...running, status: "completed", passed: true,
      judge: { ...judge, chosen_by: "project", destination: "judge.acme.test" } }} revision={3} />);
    const shown = screen.getByTestId("evaluation-judge");
    expect(shown.dataset.chosenBy).toBe("project");
    expect(shown.textContent).toBe("Judge: resource:house (chosen by the project, at judge.acme.test).");
    cleanup();
    render(<EvaluationView evaluation={{ ...running, judge: { backend: "openai", model: "judge-large",
      rubric_version: "kionga-rubric-1", chosen_by: "operator", destination: null } }} revision={3} />);
    expect(screen.getByTestId("evaluation-judge").textContent)
      .toBe("Judge: judge-large on openai (chosen by the operator).");
  });

  it("says nothing once the evaluation ended", () => {
    const ended = { ...running, status: "completed", passed: true };
    expect(waitingOn(ended)).toEqual([]);
    render(<EvaluationView evaluation={ended} revision={3} />);
    expect(screen.queryByTestId("evaluation-waiting")).toBeNull();
  });
});
