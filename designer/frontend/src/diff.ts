// What changed between two graph documents, in words (for the stale-revision dialog).
import type { GraphDoc } from "./types";

export function describeChanges(base: GraphDoc, other: GraphDoc): string[] {
  const out: string[] = [];
  const a = new Map(base.nodes.map((n) => [n.id, n]));
  const b = new Map(other.nodes.map((n) => [n.id, n]));
  for (const [id, n] of b) if (!a.has(id)) out.push(`added node ${id} (${n.kind})`);
  for (const [id, n] of a) if (!b.has(id)) out.push(`removed node ${id} (${n.kind})`);
  for (const [id, n] of b) {
    const old = a.get(id);
    if (!old) continue;
    if (old.kind !== n.kind) out.push(`node ${id} is now a ${n.kind}`);
    const keys = new Set([...Object.keys(old.config ?? {}), ...Object.keys(n.config ?? {})]);
    for (const k of keys) {
      if ((old.config ?? {})[k] !== (n.config ?? {})[k]) out.push(`node ${id}: ${k} changed`);
    }
    if ((old.name ?? "") !== (n.name ?? "")) out.push(`node ${id} renamed to “${n.name ?? ""}”`);
    if (old.x !== n.x || old.y !== n.y) out.push(`node ${id} moved`);
  }
  const key = (e: GraphDoc["edges"][number]) => `${e.from}.${e.from_port ?? ""} → ${e.to}.${e.to_port ?? ""}`;
  const ea = new Set(base.edges.map(key));
  const eb = new Set(other.edges.map(key));
  for (const e of eb) if (!ea.has(e)) out.push(`added edge ${e}`);
  for (const e of ea) if (!eb.has(e)) out.push(`removed edge ${e}`);
  if (JSON.stringify(base.settings ?? {}) !== JSON.stringify(other.settings ?? {})) out.push("graph settings changed");
  return out;
}
