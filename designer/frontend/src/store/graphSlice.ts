// The graph's actions, following React Flow's "Using a state management library" guide:
// the store applies React Flow's node and edge changes itself (applyNodeChanges/applyEdgeChanges).
import { applyEdgeChanges, applyNodeChanges } from "@xyflow/react";
import { api } from "../api";
import type { OutputPin } from "../types";
import type { StateCreator } from "zustand";
import { checkConnection } from "../compat";
import { edgeId, freshId, renameNode, renameProblem, type CanvasNode } from "../graph";
import { record, redo, undo } from "../history";
import type { EditorState, GraphState, Snapshot } from "./state";

type Initial = Pick<GraphState, "registry" | "canEdit" | "design" | "nodes" | "edges">;

export const graphSlice = (init: Initial): StateCreator<EditorState, [], [], GraphState> => (set, get) => {
  let recordedThisTick = false;
  const snapshot = (): Snapshot => ({ nodes: get().nodes, edges: get().edges, settings: get().settings });
  const restore = (s: Snapshot) => set({ nodes: s.nodes, edges: s.edges, settings: s.settings });
  const selected = () => get().nodes.filter((n) => n.selected);
  return {
    ...init,
    byKind: new Map(init.registry.components.map((c) => [c.kind, c])),
    name: init.design.name,
    settings: init.design.graph.settings ?? {},
    history: { past: [], future: [] },
    clipboard: null,
    notice: null,
    tab: /[#&]run=/.test(globalThis.location?.hash ?? "") ? "run" : "inspect",
    runView: null,
    rerun: null,
    outputPins: new Map(),

    say: (text, kind = "info") => set({ notice: { text, kind } }),
    dismiss: () => set({ notice: null }),
    setTab: (tab) => set({ tab }),
    setName: (name) => set({ name }),
    setDesign: (design) => set({ design }),
    setRunView: (runView) => set({ runView }),
    requestRerun: (rerun) => set(rerun ? { rerun, tab: "run" } : { rerun }),
    setOutputPins: (pins) => set({ outputPins: new Map(pins.map((p) => [p.node_id, p])) }),
    pinOutput: async (nodeId, port, value) => {
      const path = `/agent-designs/${get().design.id}/pins/${encodeURIComponent(nodeId)}`;
      try {
        const pin = await api<OutputPin>("PUT", path, { port, value });
        set({ outputPins: new Map(get().outputPins).set(nodeId, pin) });
        get().say(`Pinned ${nodeId}'s output: design runs repeat it instead of running the node.`);
        return true;
      } catch (e) {
        get().say(`Could not pin ${nodeId}'s output: ${e instanceof Error ? e.message : String(e)}`, "error");
        return false;
      }
    },
    unpinOutput: async (nodeId) => {
      const path = `/agent-designs/${get().design.id}/pins/${encodeURIComponent(nodeId)}`;
      try {
        await api<unknown>("DELETE", path);
      } catch (e) {
        get().say(`Could not unpin ${nodeId}: ${e instanceof Error ? e.message : String(e)}`, "error");
        return false;
      }
      const pins = new Map(get().outputPins);
      pins.delete(nodeId);
      set({ outputPins: pins });
      return true;
    },

    remember: () => {
      if (recordedThisTick) return;
      recordedThisTick = true;
      queueMicrotask(() => { recordedThisTick = false; });
      set({ history: record(get().history, snapshot()) });
    },
    undo: () => {
      const r = undo(get().history, snapshot());
      if (r) { set({ history: r.history }); restore(r.value); }
    },
    redo: () => {
      const r = redo(get().history, snapshot());
      if (r) { set({ history: r.history }); restore(r.value); }
    },

    onNodesChange: (changes) => {
      if (!get().canEdit) changes = changes.filter((c) => c.type === "select" || c.type === "dimensions");
      if (changes.some((c) => c.type === "remove")) get().remember();
      set({ nodes: applyNodeChanges(changes, get().nodes) });
    },
    onEdgesChange: (changes) => {
      if (!get().canEdit) changes = changes.filter((c) => c.type === "select");
      if (changes.some((c) => c.type === "remove")) get().remember();
      set({ edges: applyEdgeChanges(changes, get().edges) });
    },

    connect: (c) => {
      const { nodes, edges, byKind, registry } = get();
      const src = nodes.find((n) => n.id === c.source);
      const dst = nodes.find((n) => n.id === c.target);
      if (!src || !dst) return;
      const fromPort = c.sourceHandle ?? byKind.get(src.data.kind)?.outputs[0]?.name ?? "out";
      const toPort = c.targetHandle ?? "in";
      const verdict = checkConnection(registry, {
        source: src.id, sourceKind: src.data.kind, sourcePort: fromPort, sourceConfig: src.data.config,
        target: dst.id, targetKind: dst.data.kind, targetPort: toPort,
      }, edges.map((e) => ({ from: e.source, to: e.target, from_port: e.sourceHandle ?? "out", to_port: e.targetHandle ?? "in" })));
      if (!verdict.ok) {
        get().say(`Edge refused: ${verdict.reason}`, "error");
        return;
      }
      get().remember();
      set({ edges: [...get().edges, {
        id: edgeId(src.id, fromPort, dst.id, toPort), source: src.id, target: dst.id,
        sourceHandle: fromPort, targetHandle: toPort,
      }] });
      get().say(`Connected ${src.id}.${fromPort} → ${dst.id} (${verdict.reason}).`);
    },

    addNode: (kind, position) => {
      const comp = get().byKind.get(kind);
      if (!get().canEdit || !comp) return;
      const id = freshId(kind, new Set(get().nodes.map((n) => n.id)));
      get().remember();
      const node: CanvasNode = { id, type: "kionga", position, selected: true,
                                 data: { kind, name: "", group: "", config: {} } };
      set({ nodes: [...get().nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), node], tab: "inspect" });
      get().say(`Added ${comp.label} node ${id}.`);
    },

    updateNode: (id, patch) => {
      get().remember();
      set({ nodes: get().nodes.map((n) => (n.id === id ? { ...n, data: patch(n.data) } : n)) });
    },

    rename: (from, to) => {
      const { nodes, edges } = get();
      const problem = renameProblem(from, to, nodes.map((n) => n.id));
      if (problem || from === to) return problem;
      get().remember();
      set(renameNode(nodes, edges, from, to));
      get().say(`Renamed node ${from} to ${to}.`);
      return null;
    },

    setSettings: (settings) => { get().remember(); set({ settings }); },
    selectOnly: (id) => set({ nodes: get().nodes.map((n) => ({ ...n, selected: n.id === id })) }),
    selectAll: () => set({ nodes: get().nodes.map((n) => ({ ...n, selected: true })) }),

    copy: () => {
      const chosen = selected();
      const ids = new Set(chosen.map((n) => n.id));
      if (!ids.size) return;
      set({ clipboard: {
        nodes: chosen.map((n) => structuredClone(n)),
        edges: get().edges.filter((e) => ids.has(e.source) && ids.has(e.target)),
      } });
      get().say(`Copied ${ids.size} node(s).`);
    },

    paste: () => {
      const clip = get().clipboard;
      if (!clip || !get().canEdit) return;
      const taken = new Set(get().nodes.map((n) => n.id));
      const newId = new Map<string, string>();
      const pasted = clip.nodes.map((n) => {
        const id = freshId(n.data.kind, taken);
        taken.add(id);
        newId.set(n.id, id);
        return { ...structuredClone(n), id, selected: true, position: { x: n.position.x + 40, y: n.position.y + 40 } };
      });
      const pastedEdges = clip.edges.map((e) => {
        const s = newId.get(e.source)!, t = newId.get(e.target)!;
        return { ...e, id: edgeId(s, e.sourceHandle ?? "out", t, e.targetHandle ?? "in"), source: s, target: t, selected: false };
      });
      get().remember();
      set({
        nodes: [...get().nodes.map((n) => ({ ...n, selected: false })), ...pasted],
        edges: [...get().edges, ...pastedEdges],
        clipboard: { nodes: pasted, edges: pastedEdges },
      });
      get().say(`Pasted ${pasted.length} node(s).`);
    },

    deleteSelected: () => {
      if (!get().canEdit) return;
      const ids = new Set(selected().map((n) => n.id));
      if (!ids.size && !get().edges.some((e) => e.selected)) return;
      get().remember();
      set({
        nodes: get().nodes.filter((n) => !ids.has(n.id)),
        edges: get().edges.filter((e) => !e.selected && !ids.has(e.source) && !ids.has(e.target)),
      });
    },
  };
};
