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

export const saveSlice = (savedKey: string): StateCreator<EditorState, [], [], SaveState> => (set, get) => {
  /** Their revision against my unsaved changes: the dialog to reload theirs or re-apply mine. */
  function openConflict(current: Design, sentKey: string): void {
    const base = JSON.parse(get().savedKey) as GraphDoc;
    set({ conflict: {
      current,
      theirs: describeChanges(base, current.graph),
      mine: describeChanges(base, JSON.parse(sentKey) as GraphDoc),
    } });
    get().say(`Not saved: revision ${current.revision} was saved by someone else meanwhile.`, "error");
  }

  return {
    savedKey,
    saving: false,
    conflict: null,
    newer: null,
    autosave: false,
    report: null,
    validating: false,

    setAutosave: (autosave) => set({ autosave }),

    checkNewer: async () => {
      // A save in flight settles it: its answer, or its 409 opens the conflict (the
      // notice of this very save may come before its answer).
      if (get().saving) return;
      const id = get().design.id;
      let current: Design;
      try {
        current = await api<Design>("GET", `/agent-designs/${id}`);
      } catch {
        return; // the next notice or poll asks again
      }
      const s = get();
      if (s.saving || s.design.id !== id || current.revision <= s.design.revision) return;
      if (s.newer && s.newer.current.revision >= current.revision) return;
      const author = current.revisions.find((r) => r.number === current.revision)?.author;
      const by = typeof author === "string" && author ? author : "someone else";
      set({ newer: { current, by } });
      s.say(`${by} saved revision ${current.revision}: saving now would overwrite it. `
        + "Save to compare and choose.", "error");
    },
    setReport: (report, validating) => set({ report, validating }),
    setValidating: (validating) => set({ validating }),

    loadSaved: (design, message) => {
      const { registry } = get();
      const g = fromDoc(design.graph, registry);
      get().remember();
      set({
        nodes: g.nodes, edges: g.edges, settings: design.graph.settings ?? {},
        name: design.name, design, savedKey: savedKeyOf(design, registry), conflict: null,
        newer: null,
      });
      get().say(message);
    },

    save: async (revision) => {
      const s = get();
      if (!s.canEdit) return false;
      const sentKey = docKeyOf(s);
      if (s.newer && revision === undefined) {
        // Warn before overwriting: the conflict, as a refused save would open it.
        openConflict(s.newer.current, sentKey);
        return false;
      }
      set({ saving: true });
      try {
        const saved = await api<Design>("PUT", `/agent-designs/${s.design.id}`, {
          revision: revision ?? s.design.revision, graph: JSON.parse(sentKey), name: s.name,
        });
        set({ design: saved, savedKey: sentKey, conflict: null, newer: null });
        get().say(`Saved revision ${saved.revision}.`);
        return true;
      } catch (e) {
        if (e instanceof ApiError && e.status === 409 && e.code === "stale_revision") {
          openConflict(await api<Design>("GET", `/agent-designs/${s.design.id}`), sentKey);
        } else {
          get().say(`Not saved: ${message(e)}`, "error");
        }
        return false;
      } finally {
        set({ saving: false });
      }
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
        design: theirs, savedKey: savedKeyOf(theirs, s.registry), conflict: null, newer: null,
      });
      return get().save(theirs.revision);
    },
  };
};
