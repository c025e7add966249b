import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { EvaluationView, waitingOn, type Evaluation } from "./Lifecycle";

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

afterEach(cleanup);

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

  it("says nothing once the evaluation ended", () => {
    const ended = { ...running, status: "completed", passed: true };
    expect(waitingOn(ended)).toEqual([]);
    render(<EvaluationView evaluation={ended} revision={3} />);
    expect(screen.queryByTestId("evaluation-waiting")).toBeNull();
  });
});
