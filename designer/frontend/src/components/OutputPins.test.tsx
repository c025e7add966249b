import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { FlowCanvas } from "./FlowCanvas";
import { NodeRecords } from "./NodeRecords";
import { CanvasContext } from "../context";
import { pinIssues } from "../graph";
import { registry, renderWith, serve, store } from "../test/editor";
import type { NodeRecord, OutputPin } from "../types";

beforeAll(() => {
  vi.stubGlobal("ResizeObserver", class { observe() {} unobserve() {} disconnect() {} });
});
afterEach(() => { cleanup(); vi.unstubAllGlobals(); vi.stubGlobal("ResizeObserver", class { observe() {} unobserve() {} disconnect() {} }); });

const pin = (over: Partial<OutputPin> = {}): OutputPin => ({
  node_id: "input", port: "out", value: "fixed", author: "alice", updated_at: "2026-12-01T10:00:00Z", ...over,
});

const record = (over: Partial<NodeRecord> = {}): NodeRecord => ({
  node_id: "m1", attempt: 1, kind: "model", status: "completed", inputs: [],
  output: { port: "out", type: "text", value: "the whole answer", truncated: false, redacted: false },
  error: null, started_at: "2026-12-01T10:00:00Z", ended_at: "2026-12-01T10:00:01Z",
  duration_ms: 1000, usage: { tokens: 15, cost: 0.02 }, reused_from: null, ...over,
});

function answer(attempts: NodeRecord[]) {
  vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify({ attempts }), { status: 200 })));
}

describe("pinned outputs", () => {
  it("marks a pinned node's card", () => {
    const s = store();
    const pinned = pinIssues([], { schema_version: 2, nodes: [], edges: [] });
    const byKind = new Map(registry.components.map((c) => [c.kind, c]));
    renderWith(s, (
      <CanvasContext.Provider value={{ registry, byKind, pinned, runStates: new Map(),
                                       outputPins: new Map([["input", pin()]]) }}>
        <FlowCanvas pinned={pinned} />
      </CanvasContext.Provider>
    ));
    const marks = screen.getAllByTestId("node-pinned");
    expect(marks).toHaveLength(1);
    expect(marks[0].closest("[data-node-id]")?.getAttribute("data-node-id")).toBe("input");
    expect(marks[0].textContent).toBe("pinned");
  });

  it("pins a recorded output from the node's record, and unpins it", async () => {
    answer([record()]);
    const onPin = vi.fn();
    const onUnpin = vi.fn();
    const { rerender } = render(
      <NodeRecords designId="d1" runId="r1" nodeId="m1" state={{ status: "completed" }} runEnded canEdit
                   onRerun={() => undefined} onPin={onPin} onUnpin={onUnpin} />);
    await waitFor(() => expect(screen.getByTestId("node-output")).toBeTruthy());
    fireEvent.click(screen.getByRole("button", { name: "Pin output" }));
    expect(onPin).toHaveBeenCalledWith("out", "the whole answer");
    rerender(
      <NodeRecords designId="d1" runId="r1" nodeId="m1" state={{ status: "completed" }} runEnded canEdit
                   onRerun={() => undefined} onPin={onPin} onUnpin={onUnpin}
                   pin={pin({ node_id: "m1", value: "the whole answer" })} />);
    expect(screen.getByTestId("pinned-output").textContent).toContain("Output pinned on out");
    fireEvent.click(screen.getByRole("button", { name: "Unpin" }));
    expect(onUnpin).toHaveBeenCalled();
  });

  it("cannot pin a cut output, and a viewer cannot pin at all", async () => {
    answer([record({ output: { port: "out", type: "text", value: "cut", truncated: true, redacted: false } })]);
    render(<NodeRecords designId="d1" runId="r1" nodeId="m1" state={{ status: "completed" }} runEnded canEdit
                        onRerun={() => undefined} onPin={() => undefined} />);
    await waitFor(() => expect(screen.getByTestId("node-output")).toBeTruthy());
    expect((screen.getByRole("button", { name: "Pin output" }) as HTMLButtonElement).disabled).toBe(true);
    cleanup();
    answer([record()]);
    render(<NodeRecords designId="d1" runId="r1" nodeId="m1" state={{ status: "completed" }} runEnded
                        canEdit={false} onRerun={() => undefined} onPin={() => undefined}
                        pin={pin({ node_id: "m1" })} onUnpin={() => undefined} />);
    await waitFor(() => expect(screen.getByTestId("node-output")).toBeTruthy());
    expect(screen.queryByRole("button", { name: "Pin output" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Unpin" })).toBeNull();
    expect(screen.getByTestId("pinned-output")).toBeTruthy();
  });

  it("the store pins and unpins through the API", async () => {
    const s = store();
    const calls = serve({
      "PUT /api/v1/agent-designs/d1/pins/input": [200, pin({ value: "v" })],
      // jsdom's Response cannot carry the 204 itself; the answer is empty either way.
      "DELETE /api/v1/agent-designs/d1/pins/input": [200, null],
    });
    expect(await s.getState().pinOutput("input", "out", "v")).toBe(true);
    expect(s.getState().outputPins.get("input")?.value).toBe("v");
    expect(await s.getState().unpinOutput("input")).toBe(true);
    expect(s.getState().outputPins.size).toBe(0);
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ["PUT", "/api/v1/agent-designs/d1/pins/input", { port: "out", value: "v" }],
      ["DELETE", "/api/v1/agent-designs/d1/pins/input", undefined],
    ]);
    expect(await s.getState().pinOutput("ghost", "out", "v")).toBe(false);  // 404
    expect(s.getState().notice?.kind).toBe("error");
  });
});
