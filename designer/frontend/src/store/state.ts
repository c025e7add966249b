// The editor's state and actions, as one typed zustand store (one per open design).
import type { Connection, EdgeChange, NodeChange } from "@xyflow/react";
import type { CanvasEdge, CanvasNode } from "../graph";
import type { History } from "../history";
import type { RunView } from "../runstate";
import type { ComponentSpec, Design, GraphDoc, GraphSettings, OutputPin, Registry, Report } from "../types";

/** What undo/redo restores. */
export interface Snapshot {
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  settings: GraphSettings;
}

export interface Notice {
  text: string;
  kind: "info" | "error";
}

/** A save refused with 409 stale_revision: their revision and both sides' changes in words. */
export interface Conflict {
  current: Design;
  theirs: string[];
  mine: string[];
}

/** A revision saved after the one the canvas holds (a project notice told, kionga.notices). */
export interface Newer {
  current: Design;
  by: string;
}

export type Tab = "inspect" | "run" | "publish";

export interface GraphState {
  registry: Registry;
  byKind: Map<string, ComponentSpec>;
  canEdit: boolean;
  design: Design;
  name: string;
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  settings: GraphSettings;
  history: History<Snapshot>;
  clipboard: { nodes: CanvasNode[]; edges: CanvasEdge[] } | null;
  notice: Notice | null;
  tab: Tab;
  runView: RunView | null;
  /** A re-run the Inspector asked for; the run panel starts it and clears it. */
  rerun: { fromRun: string; fromNode: string } | null;
  /** The design's pinned outputs by node ID (they live with the design, not the graph). */
  outputPins: Map<string, OutputPin>;

  say: (text: string, kind?: Notice["kind"]) => void;
  dismiss: () => void;
  setTab: (tab: Tab) => void;
  setName: (name: string) => void;
  setDesign: (design: Design) => void;
  setRunView: (view: RunView | null) => void;
  requestRerun: (rerun: { fromRun: string; fromNode: string } | null) => void;
  setOutputPins: (pins: OutputPin[]) => void;
  /** Pin `value` as node `nodeId`'s output `port` (PUT …/pins/{node}); false when refused. */
  pinOutput: (nodeId: string, port: string, value: unknown) => Promise<boolean>;
  unpinOutput: (nodeId: string) => Promise<boolean>;
  /** Push the current graph on the undo stack (once per tick, however many edits follow). */
  remember: () => void;
  undo: () => void;
  redo: () => void;
  onNodesChange: (changes: NodeChange<CanvasNode>[]) => void;
  onEdgesChange: (changes: EdgeChange<CanvasEdge>[]) => void;
  connect: (c: Connection) => void;
  addNode: (kind: string, position: { x: number; y: number }) => void;
  updateNode: (id: string, patch: (d: CanvasNode["data"]) => CanvasNode["data"]) => void;
  /** Why `to` cannot be node `from`'s new ID, or null once renamed. */
  rename: (from: string, to: string) => string | null;
  setSettings: (settings: GraphSettings) => void;
  selectOnly: (id: string) => void;
  selectAll: () => void;
  copy: () => void;
  paste: () => void;
  deleteSelected: () => void;
}

export interface SaveState {
  /** The document last saved (or loaded), as JSON: the editor is dirty when its doc differs. */
  savedKey: string;
  saving: boolean;
  conflict: Conflict | null;
  /** A newer revision exists: saving opens the conflict instead of overwriting it. */
  newer: Newer | null;
  autosave: boolean;
  report: { report: Report; doc: GraphDoc } | null;
  validating: boolean;

  setAutosave: (on: boolean) => void;
  /** Read the design again (a revision.saved notice, a reconnect, the slow poll): warn when
   * someone saved a newer revision than the canvas holds. */
  checkNewer: () => Promise<void>;
  setReport: (report: { report: Report; doc: GraphDoc } | null, validating: boolean) => void;
  setValidating: (validating: boolean) => void;
  save: (revision?: number) => Promise<boolean>;
  /** Show a design as saved by the gateway (its graph replaces the editor's; Undo brings it back). */
  loadSaved: (design: Design, message: string) => void;
  reloadTheirs: () => void;
  reapplyMine: () => Promise<boolean>;
}

export type EditorState = GraphState & SaveState;
