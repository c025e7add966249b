import { createContext } from "react";
import type { PinnedIssues } from "./graph";
import type { ComponentSpec, OutputPin, Registry } from "./types";

export type NodeStatus = "running" | "completed" | "skipped" | "failed" | "retrying" | "waiting";

export interface NodeRun {
  status: NodeStatus;
  port?: string;
  preview?: string;
  text?: string;
  error?: string;
  /** From node.completed's usage (0: a re-run repeated its recorded output). */
  tokens?: number;
  /** When the node started (its node.started's `at`), and how long it took (ms). */
  startedAt?: string;
  ms?: number;
  reused?: boolean;
}

export interface CanvasState {
  registry: Registry;
  byKind: Map<string, ComponentSpec>;
  pinned: PinnedIssues;
  runStates: Map<string, NodeRun>;
  /** The design's pinned outputs by node ID: such nodes are marked. */
  outputPins?: ReadonlyMap<string, OutputPin>;
}

export const CanvasContext = createContext<CanvasState | null>(null);
