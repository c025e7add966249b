import { describe, expect, it } from "vitest";
import registryJson from "./test/registry.json";
import { checkConnection, checkPorts, closesCycle, compatibleTargets, targetType } from "./compat";
import type { Registry } from "./types";

const registry = registryJson as unknown as Registry;
const edge = (sourceKind: string, sourcePort: string, targetKind: string, config = {}) => ({
  source: "a", sourceKind, sourcePort, sourceConfig: config, target: "b", targetKind, targetPort: "in",
});

describe("port compatibility", () => {
  it("passes the same type and one conversion of the table, naming it", () => {
    expect(targetType("text", ["text", "chat"], registry.conversions)).toEqual({ type: "text" });
    expect(targetType("json", ["text", "chat"], registry.conversions)?.type).toBe("text");
    expect(targetType("documents", ["json"], registry.conversions)).toBeUndefined();
    const v = checkPorts(registry, edge("knowledge", "out", "prompt"));
    expect(v.ok).toBe(true);
    const conv = checkPorts(registry, edge("tool", "out", "model"));
    expect(conv).toMatchObject({ ok: true, arrivesAs: "text" });
    expect(conv.reason).toContain("json → text");
  });

  it("refuses a type no conversion reaches, and says why", () => {
    // documents reach extract (json, text)? documents -> text exists, so yes.
    expect(checkPorts(registry, edge("knowledge", "out", "extract")).ok).toBe(true);
    // chat -> json has no conversion; extract accepts json, text: chat -> text exists.
    expect(checkPorts(registry, edge("memory", "out", "extract")).ok).toBe(true);
    // documents -> map (json, text): via text.
    const bad = checkPorts(registry, edge("knowledge", "out", "tool"));
    // tool accepts text, json; documents -> text is a conversion, so it passes.
    expect(bad.ok).toBe(true);
    const refused = checkPorts(registry, edge("memory", "out", "tool"));
    // chat -> text exists too; the registry has no refusal among text-like outputs except
    // inputs that take nothing:
    expect(refused.ok).toBe(true);
    const none = checkPorts(registry, edge("prompt", "out", "input"));
    expect(none).toMatchObject({ ok: false });
    expect(none.reason).toMatch(/takes no inbound edges/);
  });

  it("refuses json into chat-only ports (no json -> chat conversion)", () => {
    const fake: Registry = {
      ...registry,
      components: [...registry.components,
        { ...registry.components.find((c) => c.kind === "memory")!, kind: "chatonly", label: "Chat only",
          inputs: [{ name: "in", types: ["chat"] }] }],
    };
    const v = checkPorts(fake, edge("tool", "out", "chatonly"));
    expect(v.ok).toBe(false);
    expect(v.reason).toMatch(/sends json; Chat only accepts chat and no conversion/);
    expect(compatibleTargets(fake, "tool", "out", "chatonly")).toBe(false);
    expect(compatibleTargets(fake, "prompt", "out", "chatonly")).toBe(true);
  });

  it("knows unknown ports, self loops and router routes without a condition", () => {
    expect(checkPorts(registry, edge("prompt", "nope", "output")).reason).toMatch(/no output 'nope'/);
    expect(checkPorts(registry, { ...edge("prompt", "out", "output"), target: "a" }).reason)
      .toMatch(/cannot feed itself/);
    expect(checkPorts(registry, edge("router", "route_2", "prompt")).ok).toBe(false);
    expect(checkPorts(registry, edge("router", "route_2", "prompt", { route_2: "contains:x" })).ok).toBe(true);
    expect(checkPorts(registry, edge("router", "default", "prompt")).ok).toBe(true);
  });

  it("refuses duplicates and cycles", () => {
    const edges = [{ from: "a", to: "b", from_port: "out", to_port: "in" },
                   { from: "b", to: "c", from_port: "out", to_port: "in" }];
    expect(closesCycle(edges, "c", "a")).toBe(true);
    expect(closesCycle(edges, "a", "c")).toBe(false);
    expect(checkConnection(registry, edge("prompt", "out", "prompt"), edges).reason).toMatch(/already connected/);
    const cyc = { ...edge("prompt", "out", "prompt"), source: "c", target: "a" };
    expect(checkConnection(registry, cyc, edges).reason).toMatch(/cycle/);
  });

  it("highlights targets by the registry for every kind pair", () => {
    for (const src of registry.components) {
      for (const port of src.outputs) {
        for (const dst of registry.components) {
          const v = checkPorts(registry, { ...edge(src.kind, port.name, dst.kind,
            Object.fromEntries(src.settings.map((s) => [s.name, "x"]))) });
          expect(compatibleTargets(registry, src.kind, port.name, dst.kind)).toBe(v.ok);
        }
      }
    }
  });
});
