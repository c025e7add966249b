// The graph document (API) <-> React Flow's nodes and edges, and issue placement by path.
import type { Edge, Node } from "@xyflow/react";
import type { GraphDoc, GraphSettings, Issue, Registry } from "./types";

export interface NodeData extends Record<string, unknown> {
  kind: string;
  name: string;
  group: string;
  config: Record<string, string>;
}

export type CanvasNode = Node<NodeData>;
export type CanvasEdge = Edge;

export const NODE_ID = /^[a-z][a-z0-9-]{0,62}$/;

export function edgeId(from: string, fromPort: string, to: string, toPort: string): string {
  return `${from}:${fromPort}->${to}:${toPort}`;
}

export function defaultFromPort(registry: Registry, kind: string): string {
  const comp = registry.components.find((c) => c.kind === kind);
  return comp?.outputs[0]?.name ?? "out";
}

export function fromDoc(doc: GraphDoc, registry: Registry): { nodes: CanvasNode[]; edges: CanvasEdge[] } {
  const kinds = new Map(doc.nodes.map((n) => [n.id, n.kind]));
  const nodes: CanvasNode[] = doc.nodes.map((n, i) => ({
    id: n.id,
    type: "kionga",
    position: { x: n.x ?? 40 + (i % 8) * 220, y: n.y ?? 40 + Math.floor(i / 8) * 140 },
    data: { kind: n.kind, name: n.name ?? "", group: n.group ?? "", config: { ...(n.config ?? {}) } },
  }));
  const edges: CanvasEdge[] = doc.edges.map((e) => {
    const fromPort = e.from_port ?? defaultFromPort(registry, kinds.get(e.from) ?? "");
    const toPort = e.to_port ?? "in";
    return {
      id: edgeId(e.from, fromPort, e.to, toPort),
      source: e.from, target: e.to, sourceHandle: fromPort, targetHandle: toPort,
    };
  });
  return { nodes, edges };
}

export function toDoc(
  nodes: CanvasNode[], edges: CanvasEdge[], settings: GraphSettings, name: string,
): GraphDoc {
  return {
    schema_version: 2,
    name,
    nodes: nodes.map((n) => {
      const config = Object.fromEntries(Object.entries(n.data.config).filter(([, v]) => v !== ""));
      return {
        id: n.id,
        kind: n.data.kind,
        ...(n.data.name ? { name: n.data.name } : {}),
        x: Math.round(n.position.x),
        y: Math.round(n.position.y),
        ...(n.data.group ? { group: n.data.group } : {}),
        ...(Object.keys(config).length ? { config } : {}),
      };
    }),
    edges: edges.map((e) => ({
      from: e.source, to: e.target,
      from_port: e.sourceHandle ?? "out", to_port: e.targetHandle ?? "in",
    })),
    settings,
  };
}

/** A fresh node id for `kind`: the kind itself, or kind-2, kind-3 ... */
export function freshId(kind: string, taken: Set<string>): string {
  const base = kind.replace(/[^a-z0-9-]/g, "").replace(/^[^a-z]+/, "") || "node";
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) {
    const id = `${base}-${i}`;
    if (!taken.has(id)) return id;
  }
}

export interface PinnedIssues {
  nodes: Map<string, Issue[]>;
  /** Per node: setting name -> issues. */
  settings: Map<string, Map<string, Issue[]>>;
  edges: Map<string, Issue[]>;
  graph: Issue[];
}

/** Place each issue on its node, setting or edge by `path` (indexes of the document sent). */
export function pinIssues(issues: Issue[], doc: GraphDoc): PinnedIssues {
  const pinned: PinnedIssues = { nodes: new Map(), settings: new Map(), edges: new Map(), graph: [] };
  const push = <K>(m: Map<K, Issue[]>, k: K, i: Issue) => m.set(k, [...(m.get(k) ?? []), i]);
  for (const issue of issues) {
    const path = issue.path ?? "";
    const node = /^nodes\.(\d+)(?:\.config\.([^.]+))?/.exec(path);
    const edge = /^edges\.(\d+)/.exec(path);
    if (node && doc.nodes[Number(node[1])]) {
      const id = doc.nodes[Number(node[1])].id;
      push(pinned.nodes, id, issue);
      if (node[2]) {
        const forNode = pinned.settings.get(id) ?? new Map<string, Issue[]>();
        push(forNode, node[2], issue);
        pinned.settings.set(id, forNode);
      }
    } else if (edge && doc.edges[Number(edge[1])]) {
      const e = doc.edges[Number(edge[1])];
      push(pinned.edges, edgeId(e.from, e.from_port ?? "out", e.to, e.to_port ?? "in"), issue);
    } else if (issue.node_id && doc.nodes.some((n) => n.id === issue.node_id)) {
      push(pinned.nodes, issue.node_id, issue);
    } else {
      pinned.graph.push(issue);
    }
  }
  return pinned;
}

/** Names and positions only changed? (the behaviour hash must not move then) */
export function behaviourKey(doc: GraphDoc): string {
  return JSON.stringify({
    nodes: doc.nodes.map((n) => [n.id, n.kind, n.config ?? {}]),
    edges: doc.edges, settings: doc.settings ?? {},
  });
}

/** Why `next` cannot be the new ID of node `current` (null: it can). */
export function renameProblem(current: string, next: string, taken: Iterable<string>): string | null {
  if (next === current) return null;
  if (!NODE_ID.test(next)) {
    return "Lower-case letters, digits and '-', starting with a letter (at most 63).";
  }
  for (const id of taken) if (id === next) return `Another node is called ${next}.`;
  return null;
}

/** Node `from` renamed `to`, with its edges following (their IDs too). */
export function renameNode(
  nodes: CanvasNode[], edges: CanvasEdge[], from: string, to: string,
): { nodes: CanvasNode[]; edges: CanvasEdge[] } {
  const map = (id: string) => (id === from ? to : id);
  return {
    nodes: nodes.map((n) => (n.id === from ? { ...n, id: to } : n)),
    edges: edges.map((e) => {
      if (e.source !== from && e.target !== from) return e;
      const source = map(e.source), target = map(e.target);
      return { ...e, source, target,
               id: edgeId(source, e.sourceHandle ?? "out", target, e.targetHandle ?? "in") };
    }),
  };
}
