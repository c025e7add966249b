import { describe, expect, it } from "vitest";
import { decorateEdges, freeSpot, groupFrames } from "./layout";
import { pinIssues, type CanvasNode } from "./graph";

const node = (id: string, x: number, y: number, group = ""): CanvasNode => ({
  id, type: "kionga", position: { x, y }, data: { kind: "input", name: "", group, config: {} },
});

describe("layout", () => {
  it("freeSpot keeps the wanted place when free and moves off a node that covers it", () => {
    expect(freeSpot([], { x: 10, y: 10 })).toEqual({ x: 10, y: 10 });
    const p = freeSpot([node("a", 0, 0)], { x: 0, y: 0 });
    expect(p).not.toEqual({ x: 0, y: 0 });
  });

  it("groupFrames draws one frame around each group's nodes", () => {
    const frames = groupFrames([node("a", 0, 0, "g"), node("b", 300, 100, "g"), node("c", 0, 500)]);
    expect(frames.map((f) => f.id)).toEqual(["frame:g"]);
    expect(frames[0].position).toEqual({ x: -16, y: -30 });
    expect(frames[0].width).toBe(300 + 180 + 32);
  });

  it("decorateEdges marks an edge with issues and the path a run took", () => {
    const edges = [{ id: "a:out->b:in", source: "a", target: "b", sourceHandle: "out", targetHandle: "in" }];
    const doc = { schema_version: 2, nodes: [{ id: "a", kind: "input" }, { id: "b", kind: "output" }],
                  edges: [{ from: "a", to: "b", from_port: "out", to_port: "in" }] };
    const pinned = pinIssues([{ severity: "error", code: "x", message: "bad edge", path: "edges.0" }], doc);
    const [e] = decorateEdges(edges, pinned, new Map([["a", { status: "completed" as const }]]), true);
    expect(e.className).toBe("edge-issue edge-taken");
    expect(e.animated).toBe(true);
    expect(e.ariaLabel).toBe("bad edge");
    expect(decorateEdges(edges, pinIssues([], doc), new Map(), false)[0]).toBe(edges[0]);
  });
});
