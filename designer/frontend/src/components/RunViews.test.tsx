import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { PastRuns, RunOptions, RunStatus } from "./RunViews";
import { applyEvent, emptyRun } from "../runstate";
import type { Run } from "../types";

afterEach(() => cleanup());

const run = (over: Partial<Run> = {}): Run => ({
  id: "1234567890ab-0000-0000-0000-000000000000", design_id: "d1", revision: 3, content_sha256: "a".repeat(64),
  status: "completed", input: "hello", output: "hi", error: null, usage: { tokens: 7 },
  allow_side_effects: false, created_at: "2026-12-01T10:00:00Z", started_at: null, finished_at: null, ...over,
});

describe("run panel views", () => {
  it("RunStatus shows the status, output and usage of the run", () => {
    const view = applyEvent(emptyRun(), { type: "run.completed", seq: 4, at: "2026-12-01T10:00:01Z", output: "the answer", usage: { tokens: 9 } });
    render(<RunStatus run={run()} view={view} replaying />);
    const box = screen.getByTestId("run-status");
    expect(box.getAttribute("data-status")).toBe("completed");
    expect(box.textContent).toContain("completed (replay)");
    expect(screen.getByTestId("run-output").textContent).toBe("the answer");
    expect(box.textContent).toContain("Usage: 9 tokens");
    expect(box.textContent).toContain("seq 4");
  });

  it("PastRuns says loading or empty, and replays the chosen run", () => {
    const onReplay = vi.fn();
    const { rerender } = render(<PastRuns runs={null} onReplay={onReplay} />);
    expect(screen.getByText("Loading…")).toBeTruthy();
    rerender(<PastRuns runs={[]} onReplay={onReplay} />);
    expect(screen.getByText("No runs yet.")).toBeTruthy();
    rerender(<PastRuns runs={[run()]} onReplay={onReplay} />);
    fireEvent.click(screen.getByRole("button", { name: "Replay run 12345678" }));
    expect(onReplay).toHaveBeenCalledWith(run().id);
  });

  it("RunOptions edits one field at a time and offers the nodes to stop after", () => {
    const onChange = vi.fn();
    const value = { sessionId: "s1", historyText: "", stopAfter: "" };
    render(<RunOptions value={value} nodeIds={["input", "output"]} onChange={onChange} />);
    fireEvent.change(screen.getByLabelText("Stop after node"), { target: { value: "output" } });
    expect(onChange).toHaveBeenLastCalledWith({ ...value, stopAfter: "output" });
    fireEvent.change(screen.getByLabelText("Session ID (memory)"), { target: { value: "s2" } });
    expect(onChange).toHaveBeenLastCalledWith({ ...value, sessionId: "s2" });
  });
});
