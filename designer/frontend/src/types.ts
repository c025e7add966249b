// Shapes of the public API the canvas reads (see designs/openapi.py, runs/openapi.py).

export type PortType = string;

export interface Port {
  name: string;
  types: PortType[];
}

export interface SettingSpec {
  name: string;
  label: string;
  help: string;
  type: "string" | "template" | "integer" | "choice" | "condition" | "resource";
  required: boolean;
  default: string | null;
  minimum: number | null;
  maximum: number | null;
  choices: string[];
  resource: ResourceKind | null;
  // An optional setting the node does nothing useful without: what it does when empty.
  when_empty: string | null;
}

export type ResourceKind =
  | "model" | "function" | "connection" | "knowledge_base" | "dataset" | "version";

export interface ComponentSpec {
  kind: string;
  label: string;
  help: string;
  inputs: Port[];
  outputs: Port[];
  settings: SettingSpec[];
  side_effects: boolean;
  timeout_seconds: number;
  retries: number;
  input_optional: boolean;
  error_port: boolean;
  streams: boolean;
}

export interface Conversion {
  from: PortType;
  to: PortType;
  description: string;
}

export interface ConditionOperator {
  name: string;
  argument: string | null;
  help: string;
}

export interface Registry {
  registry_version: string;
  types: PortType[];
  components: ComponentSpec[];
  conversions: Conversion[];
  condition_operators: ConditionOperator[];
  limits: Record<string, number>;
}

export interface GraphNode {
  id: string;
  kind: string;
  name?: string;
  x?: number;
  y?: number;
  group?: string;
  config?: Record<string, string>;
}

export interface GraphEdge {
  from: string;
  to: string;
  from_port?: string;
  to_port?: string;
}

export interface GraphSettings {
  max_steps?: number;
  timeout_seconds?: number;
  max_tokens?: number;
}

export interface GraphDoc {
  schema_version?: number;
  name?: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  settings?: GraphSettings;
}

export interface Issue {
  severity: "error" | "warning";
  code: string;
  message: string;
  path?: string;
  node_id?: string;
}

export interface Report {
  runnable: boolean;
  issues: Issue[];
  content_sha256: string | null;
  graph: GraphDoc | null;
}

export interface RevisionSummary {
  number: number;
  [key: string]: unknown;
}

export interface Design {
  id: string;
  project_id: number;
  name: string;
  description: string;
  revision: number;
  require_evaluation: boolean;
  /** Staff switched the gate on: only staff switch it off, and only an evaluation judged by
   * the operator's model opens it. */
  require_evaluation_by_staff?: boolean;
  created_at: string;
  updated_at: string;
  graph: GraphDoc;
  validation: { runnable: boolean; issues: Issue[]; content_sha256: string | null };
  revisions: RevisionSummary[];
}

export interface RunEvent {
  seq: number;
  type: string;
  at: string;
  node_id?: string;
  kind?: string;
  port?: string;
  attempt?: number;
  preview?: string;
  text?: string;
  error?: { code: string; message: string };
  approval_id?: string;
  output?: string | null;
  reason?: string;
  usage?: { tokens: number };
  delta?: string;
  delta_index?: number;
}

export interface Run {
  id: string;
  design_id: string | null;
  revision: number | null;
  content_sha256: string;
  status: string;
  input: string;
  output: string | null;
  error: { code: string; message: string } | null;
  usage: { tokens?: number; cost?: number };
  allow_side_effects: boolean;
  from_run?: string | null;
  from_node?: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  events?: RunEvent[];
}

/** A value a node took or gave, as its record keeps it (redacted, bounded). */
export interface RecordedValue {
  type: string;
  value: unknown;
  truncated: boolean;
  redacted: boolean;
}

/** One attempt of one node of a run (GET …/runs/{id}/nodes/{node}). */
export interface NodeRecord {
  node_id: string;
  attempt: number;
  kind: string;
  status: "completed" | "failed" | "reused";
  inputs: (RecordedValue & { source: string })[];
  output: (RecordedValue & { port: string }) | null;
  error: { code: string; message: string } | null;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  usage: { tokens: number; cost: number };
  reused_from: string | null;
}

/** A designer's pinned output of a node (GET /agent-designs/{id}/pins): design-time runs
 * repeat it instead of running the node. */
export interface OutputPin {
  node_id: string;
  port: string;
  value: unknown;
  author: string | null;
  updated_at: string;
}

/** One side's change of a field (GET /agent-designs/{id}/diff). */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  cosmetic: boolean;
}

export interface GraphDiff {
  from: string;
  to: string;
  nodes: { added: { id: string; kind: string }[]; removed: { id: string; kind: string }[];
           changed: { id: string; changes: FieldChange[] }[] };
  edges: { added: { from: string; to: string; from_port: string }[];
           removed: { from: string; to: string; from_port: string }[] };
  settings: FieldChange[];
  behaviour_changed: boolean;
}

export interface Template {
  id: string;
  name: string;
  description: string;
  example_input?: string;
  graph: GraphDoc;
}

export interface Project {
  id: number;
  slug: string;
  name: string;
  role: string;
}

export interface Resource {
  id: string;
  kind?: string;
  name?: string;
  description?: string;
  /** An MCP server's tool (function `mcp:<server>/<tool>`): its server and input schema. */
  mcpServer?: string;
  inputSchema?: ToolInputSchema;
}

/** The part of a tool's JSON Schema the inspector shows: its top-level properties. */
export interface ToolInputSchema {
  type?: string;
  properties?: Record<string, { type?: string | string[]; description?: string }>;
  required?: string[];
}
