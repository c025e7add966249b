// Saving: the revision check (409 stale_revision opens the conflict), reload theirs,
// re-apply mine onto their revision; plus the validation report the canvas shows.
import type { StateCreator } from "zustand";
import { api, ApiError } from "../api";
import { describeChanges, mergeDocs } from "../diff";
import { fromDoc, toDoc } from "../graph";
import type { Design, GraphDoc, Registry } from "../types";
import { docKeyOf, docOf } from "./derived";
import type { EditorState, SaveState } from "./state";

/** The JSON of a design's graph as the canvas would send it back unchanged. */
export function savedKeyOf(design: Design, registry: Registry): string {
  const g = fromDoc(design.graph, registry);
  return JSON.stringify(toDoc(g.nodes, g.edges, design.graph.settings ?? {}, design.name));
}

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

export const saveSlice = (savedKey: string): StateCreator<EditorState, [], [], SaveState> => (set, get) => ({
  savedKey,
  saving: false,
  conflict: null,
  autosave: false,
  report: null,
  validating: false,

  setAutosave: (autosave) => set({ autosave }),
  setReport: (report, validating) => set({ report, validating }),
  setValidating: (validating) => set({ validating }),

  save: async (revision) => {
    const s = get();
    if (!s.canEdit) return false;
    set({ saving: true });
    const sentKey = docKeyOf(s);
    try {
      const saved = await api<Design>("PUT", `/agent-designs/${s.design.id}`, {
        revision: revision ?? s.design.revision, graph: JSON.parse(sentKey), name: s.name,
      });
      set({ design: saved, savedKey: sentKey, conflict: null });
      get().say(`Saved revision ${saved.revision}.`);
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && e.code === "stale_revision") {
        const current = await api<Design>("GET", `/agent-designs/${s.design.id}`);
        const base = JSON.parse(get().savedKey) as GraphDoc;
        set({ conflict: {
          current,
          theirs: describeChanges(base, current.graph),
          mine: describeChanges(base, JSON.parse(sentKey) as GraphDoc),
        } });
        get().say(`Not saved: revision ${current.revision} was saved by someone else meanwhile.`, "error");
      } else {
        get().say(`Not saved: ${message(e)}`, "error");
      }
      return false;
    } finally {
      set({ saving: false });
    }
  },

  loadSaved: (design, message) => {
    const { registry } = get();
    const g = fromDoc(design.graph, registry);
    get().remember();
    set({
      nodes: g.nodes, edges: g.edges, settings: design.graph.settings ?? {},
      name: design.name, design, savedKey: savedKeyOf(design, registry), conflict: null,
    });
    get().say(message);
  },

  reloadTheirs: () => {
    const { conflict } = get();
    if (!conflict) return;
    get().loadSaved(conflict.current, `Reloaded revision ${conflict.current.revision}; your edit was discarded (Undo brings it back).`);
  },

  reapplyMine: async () => {
    const s = get();
    if (!s.conflict) return false;
    const theirs = s.conflict.current;
    // My edit (saved → now) onto their revision, then save over it.
    const merged = mergeDocs(JSON.parse(s.savedKey) as GraphDoc, docOf(s), theirs.graph);
    const g = fromDoc(merged, s.registry);
    const chosen = new Set(s.nodes.filter((n) => n.selected).map((n) => n.id));
    g.nodes = g.nodes.map((n) => (chosen.has(n.id) ? { ...n, selected: true } : n));
    s.remember();
    set({
      nodes: g.nodes, edges: g.edges, settings: merged.settings ?? {}, name: merged.name ?? s.name,
      design: theirs, savedKey: savedKeyOf(theirs, s.registry), conflict: null,
    });
    return get().save(theirs.revision);
  },
});
