// Port compatibility, from the registry's conversion table (contracts/conversions.py):
// the same type passes; otherwise the first accepted type reachable by one conversion.
import type { ComponentSpec, Conversion, GraphEdge, PortType, Registry } from "./types";

export interface Verdict {
  ok: boolean;
  /** Why the edge is refused (ok false), or how the value arrives (ok true). */
  reason: string;
  /** The type the value arrives as (ok true). */
  arrivesAs?: PortType;
}

export function outputType(comp: ComponentSpec | undefined, port: string): PortType | undefined {
  return comp?.outputs.find((p) => p.name === port)?.types[0];
}

export function defaultOutput(comp: ComponentSpec): string | undefined {
  return comp.outputs[0]?.name;
}

/** The type a value of `source` arrives as on a port accepting `accepted`, or undefined. */
export function targetType(
  source: PortType, accepted: PortType[], conversions: Conversion[],
): { type: PortType; via?: string } | undefined {
  if (accepted.includes(source)) return { type: source };
  for (const t of accepted) {
    const conv = conversions.find((c) => c.from === source && c.to === t);
    if (conv) return { type: t, via: conv.description };
  }
  return undefined;
}

export interface EdgeCandidate {
  source: string;
  sourceKind: string;
  sourcePort: string;
  sourceConfig?: Record<string, string>;
  target: string;
  targetKind: string;
  targetPort: string;
}

/** Whether the registry lets `c` be drawn, and why not. Graph-level checks (duplicates,
 * cycles) are `checkConnection`'s. */
export function checkPorts(registry: Registry, c: EdgeCandidate): Verdict {
  const byKind = (k: string) => registry.components.find((x) => x.kind === k);
  const src = byKind(c.sourceKind);
  const dst = byKind(c.targetKind);
  if (!src || !dst) return { ok: false, reason: "Unknown component kind." };
  if (c.source === c.target) return { ok: false, reason: "A node cannot feed itself." };
  const type = outputType(src, c.sourcePort);
  if (!type) return { ok: false, reason: `${src.label} has no output '${c.sourcePort}'.` };
  if (src.kind === "router" && c.sourcePort.startsWith("route_")
      && !(c.sourceConfig?.[c.sourcePort] ?? "").trim()) {
    return { ok: false, reason: `Give ${c.sourcePort} a condition first: the router fires it only then.` };
  }
  if (dst.inputs.length === 0) return { ok: false, reason: `${dst.label} takes no inbound edges.` };
  const input = dst.inputs.find((p) => p.name === c.targetPort);
  if (!input) return { ok: false, reason: `${dst.label} has no input '${c.targetPort}'.` };
  const arrives = targetType(type, input.types, registry.conversions);
  if (!arrives) {
    return {
      ok: false,
      reason: `${src.label}.${c.sourcePort} sends ${type}; ${dst.label} accepts ${input.types.join(", ")} `
        + `and no conversion turns ${type} into one of them.`,
    };
  }
  if (arrives.via) {
    return { ok: true, arrivesAs: arrives.type, reason: `${type} → ${arrives.type} (${arrives.via})` };
  }
  return { ok: true, arrivesAs: arrives.type, reason: `${type}` };
}

/** Would adding source→target close a cycle? */
export function closesCycle(edges: Pick<GraphEdge, "from" | "to">[], source: string, target: string): boolean {
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  const stack = [target];
  const seen = new Set<string>();
  while (stack.length) {
    const n = stack.pop()!;
    if (n === source) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...(out.get(n) ?? []));
  }
  return false;
}

/** The full check the canvas runs when a person drops a wire. */
export function checkConnection(
  registry: Registry, c: EdgeCandidate, edges: Required<GraphEdge>[],
): Verdict {
  const ports = checkPorts(registry, c);
  if (!ports.ok) return ports;
  if (edges.some((e) => e.from === c.source && e.to === c.target
      && e.from_port === c.sourcePort && e.to_port === c.targetPort)) {
    return { ok: false, reason: "These ports are already connected." };
  }
  if (closesCycle(edges, c.source, c.target)) {
    return { ok: false, reason: "This edge would close a cycle; graphs must stay acyclic." };
  }
  return ports;
}

/** Input ports of `targetKind` a value from `sourceKind.sourcePort` may reach (for highlighting). */
export function compatibleTargets(
  registry: Registry, sourceKind: string, sourcePort: string, targetKind: string,
): boolean {
  const src = registry.components.find((x) => x.kind === sourceKind);
  const dst = registry.components.find((x) => x.kind === targetKind);
  const type = outputType(src, sourcePort);
  if (!type || !dst || dst.inputs.length === 0) return false;
  return targetType(type, dst.inputs[0].types, registry.conversions) !== undefined;
}
