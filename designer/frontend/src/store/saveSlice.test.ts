import { afterEach, describe, expect, it, vi } from "vitest";
import { isDirty } from "./derived";
import { serve, store, twoNodes } from "../test/editor";

afterEach(() => vi.unstubAllGlobals());

const url = "/api/v1/agent-designs/d1";
const theirs = () => {
  const d = twoNodes();
  d.revision = 4;
  d.graph.nodes.push({ id: "prompt", kind: "prompt", x: 0, y: 200 });
  return d;
};

describe("editor store: saving", () => {
  it("saves the canvas at the current revision and is clean after", async () => {
    const s = store();
    s.getState().addNode("prompt", { x: 5, y: 5 });
    const saved = { ...twoNodes(), revision: 4 };
    const calls = serve({ [`PUT ${url}`]: [200, saved] });
    expect(await s.getState().save()).toBe(true);
    expect(calls[0].body).toMatchObject({ revision: 3, name: "Agent" });
    expect((calls[0].body as { graph: { nodes: { id: string }[] } }).graph.nodes.map((n) => n.id))
      .toEqual(["input", "output", "prompt"]);
    expect(s.getState().design.revision).toBe(4);
    expect(isDirty(s.getState())).toBe(false);
    expect(s.getState().notice?.text).toBe("Saved revision 4.");
  });

  it("a stale revision opens the conflict with both sides' changes", async () => {
    const s = store();
    s.getState().rename("output", "answer");
    serve({
      [`PUT ${url}`]: [409, { error: { code: "stale_revision", message: "stale" } }],
      [`GET ${url}`]: [200, theirs()],
    });
    expect(await s.getState().save()).toBe(false);
    const { conflict } = s.getState();
    expect(conflict?.current.revision).toBe(4);
    expect(conflict?.theirs).toContain("added node prompt (prompt)");
    expect(conflict?.mine).toContain("added node answer (output)");
    expect(isDirty(s.getState())).toBe(true);
  });

  it("reload theirs replaces the canvas; undo brings mine back", async () => {
    const s = store();
    s.getState().rename("output", "answer");
    serve({ [`PUT ${url}`]: [409, { error: { code: "stale_revision", message: "stale" } }], [`GET ${url}`]: [200, theirs()] });
    await s.getState().save();
    await new Promise((r) => setTimeout(r));
    s.getState().reloadTheirs();
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input", "output", "prompt"]);
    expect(s.getState().conflict).toBeNull();
    expect(isDirty(s.getState())).toBe(false);
    s.getState().undo();
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input", "answer"]);
  });

  it("re-apply mine merges onto their revision and saves it", async () => {
    const s = store();
    s.getState().updateNode("input", (d) => ({ ...d, name: "Question" }));
    serve({ [`PUT ${url}`]: [409, { error: { code: "stale_revision", message: "stale" } }], [`GET ${url}`]: [200, theirs()] });
    await s.getState().save();
    const calls = serve({ [`PUT ${url}`]: [200, { ...theirs(), revision: 5 }] });
    expect(await s.getState().reapplyMine()).toBe(true);
    const body = calls[0].body as { revision: number; graph: { nodes: { id: string; name?: string }[] } };
    expect(body.revision).toBe(4);
    expect(body.graph.nodes.map((n) => [n.id, n.name ?? ""])).toEqual([["input", "Question"], ["output", ""], ["prompt", ""]]);
    expect(s.getState().design.revision).toBe(5);
  });

  it("a viewer never saves", async () => {
    const calls = serve({});
    expect(await store(undefined, false).getState().save()).toBe(false);
    expect(calls).toHaveLength(0);
  });
});
