import { createContext } from "react";
import type { PinnedIssues } from "./graph";
import type { ComponentSpec, Registry } from "./types";

export type NodeStatus = "running" | "completed" | "skipped" | "failed" | "retrying" | "waiting";

export interface NodeRun {
  status: NodeStatus;
  port?: string;
  preview?: string;
  text?: string;
  error?: string;
}

export interface CanvasState {
  registry: Registry;
  byKind: Map<string, ComponentSpec>;
  pinned: PinnedIssues;
  runStates: Map<string, NodeRun>;
}

export const CanvasContext = createContext<CanvasState | null>(null);
