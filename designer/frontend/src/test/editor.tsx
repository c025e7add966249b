// Test helpers for the editor: a design, a store over the test registry, a stubbed API,
// and a render wrapped in the store's and React Flow's providers.
import type { ReactNode } from "react";
import { render } from "@testing-library/react";
import { ReactFlowProvider } from "@xyflow/react";
import { createEditorStore, EditorStoreContext, type EditorStore } from "../store/editor";
import type { Design, GraphDoc, Registry } from "../types";
import registryJson from "./registry.json";

export const registry = registryJson as unknown as Registry;

export function design(graph: Partial<GraphDoc> = {}, over: Partial<Design> = {}): Design {
  return {
    id: "d1", project_id: 1, name: "Agent", description: "", revision: 3, require_evaluation: false,
    created_at: "2026-12-01T10:00:00Z", updated_at: "2026-12-01T10:00:00Z",
    graph: { schema_version: 2, nodes: [], edges: [], ...graph },
    validation: { runnable: true, issues: [], content_sha256: "a".repeat(64) }, revisions: [],
    ...over,
  };
}

/** input → output, saved at revision 3. */
export const twoNodes = () => design({
  nodes: [{ id: "input", kind: "input", x: 0, y: 0 }, { id: "output", kind: "output", x: 300, y: 0 }],
  edges: [],
});

export function store(d: Design = twoNodes(), canEdit = true): EditorStore {
  return createEditorStore(d, registry, canEdit);
}

export { serve, type Call } from "./serve";

export function renderWith(s: EditorStore, ui: ReactNode) {
  return render(
    <EditorStoreContext.Provider value={s}>
      <ReactFlowProvider>{ui}</ReactFlowProvider>
    </EditorStoreContext.Provider>,
  );
}

/** Let the once-per-tick undo guard reset between two edits. */
export const nextTick = () => new Promise<void>((r) => queueMicrotask(r));
