import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { asText, NodeRecords, tableRows } from "./NodeRecords";
import { applyEvent, emptyRun } from "../runstate";
import type { NodeRecord } from "../types";

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

const record = (over: Partial<NodeRecord> = {}): NodeRecord => ({
  node_id: "m1", attempt: 1, kind: "model", status: "completed",
  inputs: [{ source: "p", type: "text", value: "Say hello", truncated: false, redacted: false }],
  output: { port: "out", type: "text", value: "the whole answer", truncated: false, redacted: false },
  error: null, started_at: "2026-12-01T10:00:00Z", ended_at: "2026-12-01T10:00:01Z",
  duration_ms: 1000, usage: { tokens: 15, cost: 0.02 }, reused_from: null, ...over,
});

function serve(attempts: NodeRecord[] | null): string[] {
  const urls: string[] = [];
  vi.stubGlobal("fetch", vi.fn(async (url: string) => {
    urls.push(url);
    return attempts ? new Response(JSON.stringify({ attempts }), { status: 200 })
      : new Response(JSON.stringify({ error: { code: "not_found", message: "no" } }), { status: 404 });
  }));
  return urls;
}

describe("node records", () => {
  it("shows every attempt's input, full output, tokens and time, and re-runs from the node", async () => {
    const urls = serve([record({ attempt: 1, status: "failed", output: null,
                                 error: { code: "resource_unavailable", message: "down" } }),
                        record({ attempt: 2 })]);
    const onRerun = vi.fn();
    render(<NodeRecords designId="d1" runId="r1234567-x" nodeId="m1" state={{ status: "completed" }}
                        runEnded canEdit onRerun={onRerun} />);
    await waitFor(() => expect(screen.getAllByTestId("node-attempt")).toHaveLength(2));
    expect(urls).toEqual(["/api/v1/agent-designs/d1/runs/r1234567-x/nodes/m1"]);
    const [failed, done] = screen.getAllByTestId("node-attempt");
    expect(failed.textContent).toContain("resource_unavailable: down");
    expect(done.textContent).toContain("15 tokens · cost 0.02 · 1000 ms");
    expect(screen.getByTestId("node-output").textContent).toBe("the whole answer");
    fireEvent.click(screen.getAllByRole("button", { name: "JSON" }).at(-1)!);
    expect(screen.getByTestId("node-output").textContent).toBe('"the whole answer"');
    fireEvent.click(screen.getByRole("button", { name: "Re-run from here" }));
    expect(onRerun).toHaveBeenCalled();
  });

  it("waits for a running node and offers no re-run to a viewer", () => {
    const urls = serve([record()]);
    render(<NodeRecords designId="d1" runId="r1" nodeId="m1" state={{ status: "running" }}
                        runEnded={false} canEdit={false} onRerun={() => undefined} />);
    expect(screen.getByTestId("node-records").textContent).toContain("This node is running");
    expect(urls).toEqual([]);
    expect(screen.queryByRole("button", { name: "Re-run from here" })).toBeNull();
  });

  it("says so when the node has no record", async () => {
    serve(null);
    render(<NodeRecords designId="d1" runId="r1" nodeId="m1" state={undefined} runEnded
                        canEdit onRerun={() => undefined} />);
    await waitFor(() => expect(screen.getByText("No record of this node in this run.")).toBeTruthy());
  });

  it("reads chats and documents as text and as a table", () => {
    const chat = [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }];
    expect(asText(chat)).toBe("user: hi\nassistant: hello");
    expect(asText({ a: 1 })).toBe('{"a":1}');
    expect(tableRows(chat)).toEqual(chat);
    expect(tableRows("text")).toBeNull();
  });

  it("puts a node's tokens and time, and a reused node, in the run's state", () => {
    let view = emptyRun("r1");
    view = applyEvent(view, { seq: 0, type: "node.started", at: "2026-12-01T10:00:00.000Z", node_id: "m1" });
    view = applyEvent(view, { seq: 1, type: "node.completed", at: "2026-12-01T10:00:01.250Z",
                              node_id: "m1", usage: { tokens: 15 } });
    view = applyEvent(view, { seq: 2, type: "node.started", at: "2026-12-01T10:00:02.000Z", node_id: "p" });
    view = applyEvent(view, { seq: 3, type: "node.completed", at: "2026-12-01T10:00:02.000Z",
                              node_id: "p", usage: { tokens: 0 }, reason: "reused" });
    expect(view.runId).toBe("r1");
    expect(view.nodes.get("m1")).toMatchObject({ tokens: 15, ms: 1250, reused: false });
    expect(view.nodes.get("p")).toMatchObject({ tokens: 0, ms: 0, reused: true });
  });
});

describe("a skipped node", () => {
  it("says so without asking for records", () => {
    const urls = serve([record()]);
    render(<NodeRecords designId="d1" runId="r1" nodeId="m1" state={{ status: "skipped" }}
                        runEnded canEdit onRerun={() => undefined} />);
    expect(screen.getByTestId("node-records").textContent).toContain("This node was skipped in this run.");
    expect(urls).toEqual([]);
  });
});
