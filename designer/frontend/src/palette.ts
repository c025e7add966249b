// How the palette groups the registry's kinds (the registry itself has no groups).
import type { ComponentSpec } from "./types";

export const GROUPS: [string, string[]][] = [
  ["Inputs & outputs", ["input", "output"]],
  ["Language", ["prompt", "model", "memory"]],
  ["Logic", ["condition", "router", "join", "extract", "approval"]],
  ["Data & actions", ["knowledge", "storage", "tool", "api"]],
  ["Flows", ["subflow", "map", "loop"]],
];

export function grouped(components: ComponentSpec[], filter = ""): [string, ComponentSpec[]][] {
  const f = filter.trim().toLowerCase();
  const match = (c: ComponentSpec) =>
    !f || c.kind.includes(f) || c.label.toLowerCase().includes(f) || c.help.toLowerCase().includes(f);
  const known = new Set(GROUPS.flatMap(([, kinds]) => kinds));
  const out: [string, ComponentSpec[]][] = GROUPS.map(([name, kinds]) => [
    name,
    kinds.map((k) => components.find((c) => c.kind === k)).filter((c): c is ComponentSpec => !!c && match(c)),
  ]);
  out.push(["Other", components.filter((c) => !known.has(c.kind) && match(c))]);
  return out.filter(([, list]) => list.length > 0);
}
