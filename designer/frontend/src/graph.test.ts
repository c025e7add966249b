import { describe, expect, it } from "vitest";
import registryJson from "./test/registry.json";
import { behaviourKey, freshId, fromDoc, NODE_ID, pinIssues, renameNode, renameProblem, toDoc } from "./graph";
import { applyEvent, emptyRun } from "./runstate";
import { record, redo, undo } from "./history";
import { describeChanges } from "./diff";
import type { GraphDoc, Registry } from "./types";

const registry = registryJson as unknown as Registry;
const doc: GraphDoc = {
  schema_version: 2, name: "g",
  nodes: [{ id: "input", kind: "input", x: 0, y: 0 },
          { id: "route", kind: "condition", x: 200, y: 0, config: { expression: "contains:x" } },
          { id: "output", kind: "output", x: 400, y: 0 }],
  edges: [{ from: "input", to: "route" }, { from: "route", to: "output", from_port: "false", to_port: "in" }],
  settings: { max_steps: 50 },
};

describe("graph document", () => {
  it("renames a node, its edges following", () => {
    const { nodes, edges } = fromDoc(doc, registry);
    expect(renameProblem("route", "Route", ["input", "route"])).toMatch(/Lower-case/);
    expect(renameProblem("route", "input", ["input", "route"])).toBe("Another node is called input.");
    expect(renameProblem("route", "is-refund", ["input", "route"])).toBeNull();
    const renamed = renameNode(nodes, edges, "route", "is-refund");
    const back = toDoc(renamed.nodes, renamed.edges, {}, "g");
    expect(back.nodes.map((n) => n.id)).toEqual(["input", "is-refund", "output"]);
    expect(back.edges).toEqual([
      { from: "input", to: "is-refund", from_port: "out", to_port: "in" },
      { from: "is-refund", to: "output", from_port: "false", to_port: "in" }]);
    expect(renamed.edges[1].id).toBe("is-refund:false->output:in");
  });

  it("round-trips, filling default ports", () => {
    const { nodes, edges } = fromDoc(doc, registry);
    expect(edges[0].sourceHandle).toBe("out");
    const back = toDoc(nodes, edges, doc.settings!, "g");
    expect(back.nodes[1].config).toEqual({ expression: "contains:x" });
    expect(back.edges[1]).toEqual({ from: "route", to: "output", from_port: "false", to_port: "in" });
  });

  it("pins issues on nodes, settings, edges and the graph by path", () => {
    const pinned = pinIssues([
      { severity: "error", code: "a", message: "bad expr", path: "nodes.1.config.expression" },
      { severity: "error", code: "b", message: "bad port", path: "edges.1.from_port" },
      { severity: "warning", code: "c", message: "graph", path: "settings.max_steps" },
    ], { ...doc, edges: [doc.edges[0], { ...doc.edges[1] }] });
    expect(pinned.nodes.get("route")?.[0].message).toBe("bad expr");
    expect(pinned.settings.get("route")?.get("expression")?.[0].message).toBe("bad expr");
    expect([...pinned.edges.keys()]).toEqual(["route:false->output:in"]);
    expect(pinned.graph[0].message).toBe("graph");
  });

  it("makes fresh valid ids", () => {
    const id = freshId("prompt", new Set(["prompt", "prompt-2"]));
    expect(id).toBe("prompt-3");
    expect(NODE_ID.test(id)).toBe(true);
  });

  it("keeps the behaviour key when only names and positions move", () => {
    const moved = { ...doc, nodes: doc.nodes.map((n) => ({ ...n, x: (n.x ?? 0) + 5, name: "renamed" })) };
    expect(behaviourKey(moved)).toBe(behaviourKey(doc));
    expect(describeChanges(doc, moved)).toContain("node input moved");
  });
});

describe("run state", () => {
  it("folds events once each, deltas by index", () => {
    let v = emptyRun();
    v = applyEvent(v, { seq: 0, type: "run.started", at: "" });
    v = applyEvent(v, { seq: 1, type: "node.started", at: "", node_id: "model" });
    v = applyEvent(v, { seq: 1, type: "node.delta", at: "", node_id: "model", delta: "mock: ", delta_index: 0 });
    v = applyEvent(v, { seq: 1, type: "node.delta", at: "", node_id: "model", delta: "hi", delta_index: 1 });
    v = applyEvent(v, { seq: 1, type: "node.delta", at: "", node_id: "model", delta: "hi", delta_index: 1 });
    expect(v.nodes.get("model")).toMatchObject({ status: "running", text: "mock: hi" });
    v = applyEvent(v, { seq: 2, type: "node.completed", at: "", node_id: "model", text: "mock: hi" });
    const again = applyEvent(v, { seq: 2, type: "node.failed", at: "", node_id: "model" });
    expect(again).toBe(v);
    v = applyEvent(v, { seq: 3, type: "run.completed", at: "", output: "mock: hi", usage: { tokens: 4 } });
    expect(v).toMatchObject({ status: "completed", output: "mock: hi", tokens: 4, lastSeq: 3 });
  });

  it("undo and redo walk snapshots", () => {
    let h = record<number>({ past: [], future: [] }, 1);
    h = record(h, 2);
    const u = undo(h, 3)!;
    expect(u.value).toBe(2);
    const r = redo(u.history, 2)!;
    expect(r.value).toBe(3);
  });
});

import { mergeDocs } from "./diff";

describe("re-applying an edit after a stale save", () => {
  it("keeps their changes and mine, field by field", () => {
    const base = doc;
    const theirs: GraphDoc = { ...doc, nodes: doc.nodes.map((n) => n.id === "route"
      ? { ...n, config: { expression: "contains:theirs" } } : n) };
    const mine: GraphDoc = {
      ...doc,
      nodes: [...doc.nodes.map((n) => n.id === "route" ? { ...n, name: "Mine", x: 999 } : n),
              { id: "prompt", kind: "prompt", config: { template: "{input}" } }],
      edges: [doc.edges[0], { from: "route", to: "prompt", from_port: "true", to_port: "in" }],
    };
    const merged = mergeDocs(base, mine, theirs);
    const route = merged.nodes.find((n) => n.id === "route")!;
    expect(route).toMatchObject({ name: "Mine", x: 999, config: { expression: "contains:theirs" } });
    expect(merged.nodes.map((n) => n.id)).toEqual(["input", "route", "output", "prompt"]);
    expect(merged.edges).toEqual([doc.edges[0], { from: "route", to: "prompt", from_port: "true", to_port: "in" }]);
  });
});
