// Values derived from the store's state (memoized on the parts they read).
import { toDoc } from "../graph";
import type { GraphDoc } from "../types";
import type { EditorState } from "./state";

let last: { parts: unknown[]; doc: GraphDoc; key: string } | null = null;

function current(s: Pick<EditorState, "nodes" | "edges" | "settings" | "name">) {
  const parts = [s.nodes, s.edges, s.settings, s.name];
  if (!last || parts.some((p, i) => p !== last!.parts[i])) {
    const doc = toDoc(s.nodes, s.edges, s.settings, s.name);
    last = { parts, doc, key: JSON.stringify(doc) };
  }
  return last;
}

/** The graph document the canvas shows (what save sends). */
export const docOf = (s: Pick<EditorState, "nodes" | "edges" | "settings" | "name">): GraphDoc => current(s).doc;
export const docKeyOf = (s: Pick<EditorState, "nodes" | "edges" | "settings" | "name">): string => current(s).key;
export const isDirty = (s: EditorState): boolean => docKeyOf(s) !== s.savedKey;
