// One store per open design (created from the loaded design, so not a module global);
// components read it with useEditor(selector) under <EditorStoreContext.Provider>.
import { createContext, useContext } from "react";
import { createStore, useStore, type StoreApi } from "zustand";
import { fromDoc } from "../graph";
import type { Design, Registry } from "../types";
import { graphSlice } from "./graphSlice";
import { saveSlice, savedKeyOf } from "./saveSlice";
import type { EditorState } from "./state";

export type EditorStore = StoreApi<EditorState>;

export function createEditorStore(design: Design, registry: Registry, canEdit: boolean): EditorStore {
  const { nodes, edges } = fromDoc(design.graph, registry);
  return createStore<EditorState>()((...a) => ({
    ...graphSlice({ registry, canEdit, design, nodes, edges })(...a),
    ...saveSlice(savedKeyOf(design, registry))(...a),
  }));
}

export const EditorStoreContext = createContext<EditorStore | null>(null);

export function useEditorStore(): EditorStore {
  const store = useContext(EditorStoreContext);
  if (!store) throw new Error("useEditor outside <EditorStoreContext.Provider>");
  return store;
}

export function useEditor<T>(selector: (s: EditorState) => T): T {
  return useStore(useEditorStore(), selector);
}
