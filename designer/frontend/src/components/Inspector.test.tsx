import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, screen } from "@testing-library/react";
import { Inspector } from "./Inspector";
import { pinIssues } from "../graph";
import { isDirty } from "../store/derived";
import { renderWith, serve, store } from "../test/editor";

// The Run tab stays mounted and reads the API: an empty one answers it here.
beforeEach(() => { serve({}); });
afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

const nothingPinned = pinIssues([], { schema_version: 2, nodes: [], edges: [] });

describe("Inspector", () => {
  it("edits the graph settings when no node is selected (dirty, one undo step)", () => {
    const s = store();
    renderWith(s, <Inspector pinned={nothingPinned} />);
    fireEvent.change(screen.getByLabelText("Max steps"), { target: { value: "12" } });
    expect(s.getState().settings).toEqual({ max_steps: 12 });
    expect(isDirty(s.getState())).toBe(true);
    expect(s.getState().history.past).toHaveLength(1);
  });

  it("shows the selected node's settings and connects it from the keyboard form", () => {
    const s = store();
    renderWith(s, <Inspector pinned={nothingPinned} />);
    act(() => s.getState().selectOnly("input"));
    expect(screen.getByRole("region", { name: "Node settings" }).textContent).toContain("Input");
    fireEvent.change(screen.getByLabelText("To node"), { target: { value: "output" } });
    fireEvent.click(screen.getByRole("button", { name: "Connect" }));
    expect(s.getState().edges.map((e) => e.id)).toEqual(["input:out->output:in"]);
  });

  it("says how many nodes are selected when several are", () => {
    const s = store();
    renderWith(s, <Inspector pinned={nothingPinned} />);
    act(() => s.getState().selectAll());
    expect(screen.getByText("2 nodes selected. Copy, paste or delete them together.")).toBeTruthy();
  });

  it("picking an issue's node selects it", () => {
    const s = store();
    const doc = { schema_version: 2 as const, nodes: [{ id: "input", kind: "input" }, { id: "output", kind: "output" }], edges: [] };
    s.setState({ report: { report: { runnable: false, content_sha256: null, graph: null,
      issues: [{ severity: "error", code: "unreachable", message: "not reached", path: "nodes.1" }] }, doc } });
    renderWith(s, <Inspector pinned={nothingPinned} />);
    fireEvent.click(screen.getByRole("button", { name: "output" }));
    expect(s.getState().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["output"]);
  });

  it("switches tabs through the store", () => {
    const s = store();
    renderWith(s, <Inspector pinned={nothingPinned} />);
    fireEvent.click(screen.getByRole("tab", { name: "Publish" }));
    expect(s.getState().tab).toBe("publish");
    expect(screen.getByRole("tab", { name: "Publish" }).getAttribute("aria-selected")).toBe("true");
  });
});
