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

type Node = GraphDoc["nodes"][number];
type Edge = GraphDoc["edges"][number];

function pick<T>(base: T, mine: T, theirs: T): T {
  return JSON.stringify(mine) !== JSON.stringify(base) ? mine : theirs;
}

/** Re-apply my edit (base → mine) onto theirs, field by field: where I changed something,
 * mine wins; everything else is theirs. Used after a 409 stale_revision. */
export function mergeDocs(base: GraphDoc, mine: GraphDoc, theirs: GraphDoc): GraphDoc {
  const b = new Map(base.nodes.map((n) => [n.id, n]));
  const m = new Map(mine.nodes.map((n) => [n.id, n]));
  const nodes: Node[] = [];
  for (const t of theirs.nodes) {
    const old = b.get(t.id), me = m.get(t.id);
    if (old && !me) continue; // I deleted it
    if (!old || !me) { nodes.push(t); continue; }
    const keys = new Set([...Object.keys(old.config ?? {}), ...Object.keys(me.config ?? {}),
                          ...Object.keys(t.config ?? {})]);
    const config: Record<string, string> = {};
    for (const k of keys) {
      const v = pick(old.config?.[k], me.config?.[k], t.config?.[k]);
      if (v !== undefined) config[k] = v;
    }
    nodes.push({
      id: t.id, kind: pick(old.kind, me.kind, t.kind), name: pick(old.name, me.name, t.name),
      x: pick(old.x, me.x, t.x), y: pick(old.y, me.y, t.y), group: pick(old.group, me.group, t.group),
      ...(Object.keys(config).length ? { config } : {}),
    });
  }
  const have = new Set(nodes.map((n) => n.id));
  for (const me of mine.nodes) if (!b.has(me.id) && !have.has(me.id)) nodes.push(me);
  const key = (e: Edge) => `${e.from}|${e.from_port ?? ""}|${e.to}|${e.to_port ?? ""}`;
  const baseEdges = new Set(base.edges.map(key));
  const mineEdges = new Set(mine.edges.map(key));
  const ids = new Set(nodes.map((n) => n.id));
  const edges = [
    ...theirs.edges.filter((e) => !(baseEdges.has(key(e)) && !mineEdges.has(key(e)))),
    ...mine.edges.filter((e) => !baseEdges.has(key(e))),
  ].filter((e, i, all) => ids.has(e.from) && ids.has(e.to) && all.findIndex((x) => key(x) === key(e)) === i);
  const settings: Record<string, number | undefined> = {};
  const sb = base.settings ?? {}, sm = mine.settings ?? {}, st = theirs.settings ?? {};
  for (const k of new Set([...Object.keys(sb), ...Object.keys(sm), ...Object.keys(st)]) as Set<keyof typeof sb>) {
    const v = pick(sb[k], sm[k], st[k]);
    if (v !== undefined) settings[k] = v;
  }
  return { ...theirs, name: pick(base.name, mine.name, theirs.name), nodes, edges, settings };
}
