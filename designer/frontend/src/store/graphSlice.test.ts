import { afterEach, describe, expect, it, vi } from "vitest";
import { isDirty } from "./derived";
import { design, nextTick, store } from "../test/editor";

afterEach(() => vi.unstubAllGlobals());

describe("editor store: graph actions", () => {
  it("adds a node with a fresh id, selected, and marks the canvas dirty", () => {
    const s = store();
    expect(isDirty(s.getState())).toBe(false);
    s.getState().addNode("input", { x: 10, y: 20 });
    const { nodes, notice, tab } = s.getState();
    expect(nodes.map((n) => n.id)).toEqual(["input", "output", "input-2"]);
    expect(nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["input-2"]);
    expect(notice?.text).toBe("Added Input node input-2.");
    expect(tab).toBe("inspect");
    expect(isDirty(s.getState())).toBe(true);
  });

  it("refuses to add when the user may not edit, and for an unknown kind", () => {
    const ro = store(undefined, false);
    ro.getState().addNode("input", { x: 0, y: 0 });
    expect(ro.getState().nodes).toHaveLength(2);
    const s = store();
    s.getState().addNode("no-such-kind", { x: 0, y: 0 });
    expect(s.getState().nodes).toHaveLength(2);
  });

  it("removes a node through React Flow's changes, and undo brings it back", () => {
    const s = store();
    s.getState().onNodesChange([{ type: "remove", id: "output" }]);
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input"]);
    s.getState().undo();
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input", "output"]);
    expect(isDirty(s.getState())).toBe(false);
  });

  it("a viewer's changes keep selection only", () => {
    const s = store(undefined, false);
    s.getState().onNodesChange([{ type: "remove", id: "output" }, { type: "select", id: "input", selected: true }]);
    expect(s.getState().nodes.map((n) => [n.id, !!n.selected])).toEqual([["input", true], ["output", false]]);
  });

  it("connects compatible ports and refuses an edge the registry forbids", () => {
    const s = store();
    s.getState().connect({ source: "input", target: "output", sourceHandle: null, targetHandle: null });
    expect(s.getState().edges.map((e) => e.id)).toEqual(["input:out->output:in"]);
    expect(s.getState().notice?.kind).toBe("info");
    s.getState().connect({ source: "output", target: "input", sourceHandle: "out", targetHandle: "in" });
    expect(s.getState().edges).toHaveLength(1);
    expect(s.getState().notice).toMatchObject({ kind: "error" });
    expect(s.getState().notice?.text).toMatch(/^Edge refused: /);
  });

  it("undo and redo walk the history; a new edit drops the redo branch", async () => {
    const s = store();
    s.getState().addNode("input", { x: 0, y: 0 });
    await nextTick();
    s.getState().rename("input-2", "second");
    await nextTick();
    expect(s.getState().history.past).toHaveLength(2);
    s.getState().undo();
    expect(s.getState().nodes.map((n) => n.id)).toContain("input-2");
    s.getState().undo();
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input", "output"]);
    expect(s.getState().history.past).toHaveLength(0);
    s.getState().redo();
    expect(s.getState().nodes.map((n) => n.id)).toContain("input-2");
    s.getState().setSettings({ max_steps: 5 });
    expect(s.getState().history.future).toHaveLength(0);
  });

  it("records one undo step for edits within one tick", () => {
    const s = store();
    s.getState().updateNode("input", (d) => ({ ...d, name: "a" }));
    s.getState().updateNode("input", (d) => ({ ...d, name: "ab" }));
    expect(s.getState().history.past).toHaveLength(1);
  });

  it("renames a node with its edges, and says why a name is refused", () => {
    const s = store();
    s.getState().connect({ source: "input", target: "output", sourceHandle: "out", targetHandle: "in" });
    expect(s.getState().rename("input", "output")).toBe("Another node is called output.");
    expect(s.getState().rename("input", "start")).toBeNull();
    expect(s.getState().edges.map((e) => e.id)).toEqual(["start:out->output:in"]);
  });

  it("copies and pastes the selection with fresh ids, and deletes the selection with its edges", () => {
    const s = store();
    s.getState().connect({ source: "input", target: "output", sourceHandle: "out", targetHandle: "in" });
    s.getState().selectAll();
    s.getState().copy();
    s.getState().paste();
    expect(s.getState().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(["input-2", "output-2"]);
    expect(s.getState().edges.map((e) => e.id)).toContain("input-2:out->output-2:in");
    s.getState().deleteSelected();
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input", "output"]);
    expect(s.getState().edges.map((e) => e.id)).toEqual(["input:out->output:in"]);
  });

  it("dirty follows the name and graph settings too", () => {
    const s = store(design());
    s.getState().setName("Renamed");
    expect(isDirty(s.getState())).toBe(true);
    s.getState().setName("Agent");
    expect(isDirty(s.getState())).toBe(false);
    s.getState().setSettings({ max_steps: 7 });
    expect(isDirty(s.getState())).toBe(true);
  });
});
