// A run's events folded into per-node states (pure: the live stream, a reload's stored
// events and a replay all go through applyEvent).
import type { NodeRun } from "./context";
import type { RunEvent } from "./types";

export interface RunView {
  /** The run the view shows (its node records: GET …/runs/{runId}/nodes/{node}). */
  runId: string | null;
  nodes: Map<string, NodeRun>;
  /** Per node: streamed text pieces by delta_index (a reconnect may repeat some). */
  deltas: Map<string, string[]>;
  lastSeq: number;
  status: "starting" | "running" | "completed" | "failed" | "cancelled";
  output: string | null;
  tokens: number | null;
  reason: string | null;
  deltaCount: number;
}

export const TERMINAL = new Set(["run.completed", "run.failed", "run.cancelled"]);

export function emptyRun(runId: string | null = null): RunView {
  return { runId, nodes: new Map(), deltas: new Map(), lastSeq: -1, status: "starting", output: null,
           tokens: null, reason: null, deltaCount: 0 };
}

function elapsed(from: string | undefined, to: string): number | undefined {
  if (!from) return undefined;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

export function applyEvent(view: RunView, e: RunEvent): RunView {
  if (e.type === "node.delta") {
    if (!e.node_id || e.delta === undefined) return view;
    const deltas = new Map(view.deltas);
    const pieces = [...(deltas.get(e.node_id) ?? [])];
    pieces[e.delta_index ?? pieces.length] = e.delta;
    deltas.set(e.node_id, pieces);
    const nodes = new Map(view.nodes);
    const prev = nodes.get(e.node_id);
    nodes.set(e.node_id, { ...(prev ?? { status: "running" }), text: pieces.join("") });
    return { ...view, deltas, nodes, deltaCount: view.deltaCount + 1 };
  }
  if (e.seq <= view.lastSeq) return view; // already applied (resume, reconnect)
  const next: RunView = { ...view, lastSeq: e.seq };
  const id = e.node_id;
  const set = (patch: Partial<NodeRun> & { status: NodeRun["status"] }) => {
    if (!id) return;
    next.nodes = new Map(next.nodes);
    next.nodes.set(id, { ...(next.nodes.get(id) ?? {}), ...patch });
  };
  switch (e.type) {
    case "run.started": next.status = "running"; break;
    case "node.started":
      if (id) { next.deltas = new Map(next.deltas); next.deltas.delete(id); }
      set({ status: "running", text: undefined, error: undefined, startedAt: e.at, ms: undefined,
            tokens: undefined, reused: undefined });
      break;
    case "node.retrying": set({ status: "retrying", error: e.error?.message }); break;
    case "node.completed":
      set({ status: "completed", port: e.port, preview: e.preview, ...(e.text !== undefined ? { text: e.text } : {}),
            tokens: e.usage?.tokens, ms: elapsed(id ? next.nodes.get(id)?.startedAt : undefined, e.at),
            reused: e.reason === "reused" });
      break;
    case "node.skipped": set({ status: "skipped" }); break;
    case "node.failed":
      set({ status: "failed", error: e.error?.message,
            ms: elapsed(id ? next.nodes.get(id)?.startedAt : undefined, e.at) });
      break;
    case "approval.requested": set({ status: "waiting" }); break;
    case "approval.resolved": set({ status: "running", preview: e.reason }); break;
    case "run.completed":
      next.status = "completed"; next.output = e.output ?? null; next.tokens = e.usage?.tokens ?? null;
      break;
    case "run.failed":
      next.status = "failed"; next.reason = e.reason ?? e.error?.message ?? null;
      next.tokens = e.usage?.tokens ?? next.tokens;
      break;
    case "run.cancelled": next.status = "cancelled"; next.reason = e.reason ?? "cancelled"; break;
  }
  return next;
}
