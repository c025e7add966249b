// The registry-driven settings form of one node: required marks, ranges, defaults,
// choices, the condition grammar and resource pickers.
import { useEffect, useId, useState } from "react";
import type { ConditionOperator, ComponentSpec, Issue, ResourceKind, SettingSpec } from "../types";
import type { ResourceList, ResourceLoader } from "../resources";
import { ToolInputSchema } from "./ToolInputSchema";

interface Props {
  component: ComponentSpec;
  nodeId: string;
  name: string;
  group: string;
  config: Record<string, string>;
  issues?: Map<string, Issue[]>;
  nodeIssues?: Issue[];
  operators: ConditionOperator[];
  projectId: number;
  loadResources: ResourceLoader;
  onConfig: (name: string, value: string) => void;
  onName: (name: string) => void;
  onGroup: (group: string) => void;
  /** Rename the node: an error message, or null when done. Without it the ID is fixed. */
  onRename?: (id: string) => string | null;
  readOnly?: boolean;
}

/** Client-side hints shown before the server's validation answers. */
export function localProblem(spec: SettingSpec, value: string): string | null {
  const v = value.trim();
  if (!v) return spec.required && spec.default === null ? "Required." : null;
  if (spec.type === "integer") {
    if (!/^-?\d+$/.test(v)) return "A whole number.";
    const n = Number(v);
    if (spec.minimum !== null && n < spec.minimum) return `At least ${spec.minimum}.`;
    if (spec.maximum !== null && n > spec.maximum) return `At most ${spec.maximum}.`;
  }
  if (spec.type === "choice" && spec.choices.length && !spec.choices.includes(v)) {
    return `One of ${spec.choices.join(", ")}.`;
  }
  return null;
}

export function ConfigForm(p: Props) {
  return (
    <form className="config-form" aria-label={`Settings of ${p.nodeId}`} onSubmit={(e) => e.preventDefault()}>
      <p className="muted small">{p.component.help}</p>
      {p.onRename && !p.readOnly && <IdField nodeId={p.nodeId} onRename={p.onRename} />}
      <Field label="Name" id={`${p.nodeId}-name`}>
        <input id={`${p.nodeId}-name`} value={p.name} placeholder={p.component.label}
               readOnly={p.readOnly} onChange={(e) => p.onName(e.target.value)} />
      </Field>
      <Field label="Group" id={`${p.nodeId}-group`} help="Nodes with the same group are framed together.">
        <input id={`${p.nodeId}-group`} value={p.group} readOnly={p.readOnly}
               onChange={(e) => p.onGroup(e.target.value)} />
      </Field>
      {p.component.settings.map((spec) => (
        <SettingField key={spec.name} spec={spec} nodeId={p.nodeId}
                      value={p.config[spec.name] ?? ""} issues={p.issues?.get(spec.name) ?? []}
                      operators={p.operators} projectId={p.projectId}
                      loadResources={p.loadResources} readOnly={p.readOnly}
                      onChange={(v) => p.onConfig(spec.name, v)} />
      ))}
      {p.component.settings.length === 0 && <p className="muted small">No settings.</p>}
      {p.component.side_effects && (
        <p className="note small">Side effects: runs only with “allow side effects”.</p>
      )}
    </form>
  );
}

/** The node's ID (edges and conditions refer to it; part of the behaviour hash), applied
 * on Enter or when focus leaves; a refused ID stays in the box with the reason. */
function IdField({ nodeId, onRename }: { nodeId: string; onRename: (id: string) => string | null }) {
  const [draft, setDraft] = useState(nodeId);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => { setDraft(nodeId); setProblem(null); }, [nodeId]);
  const commit = () => {
    const next = draft.trim();
    if (next === nodeId) { setProblem(null); return; }
    setProblem(onRename(next));
  };
  const id = "node-id-field";
  return (
    <Field label="ID" id={id} help="Edges and the behaviour hash use it. Enter applies."
           problems={problem ? [problem] : []}>
      <input id={id} value={draft} spellCheck={false} autoComplete="off"
             aria-describedby={`${id}-help`} aria-invalid={!!problem}
             onChange={(e) => setDraft(e.target.value)} onBlur={commit}
             onKeyDown={(e) => { if (e.key === "Enter") { e.preventDefault(); commit(); } }} />
    </Field>
  );
}

function Field(props: { label: string; id: string; help?: string; required?: boolean;
                        children: React.ReactNode; problems?: string[] }) {
  const helpId = `${props.id}-help`;
  return (
    <div className={"field" + (props.problems?.length ? " has-issue" : "")}>
      <label htmlFor={props.id}>
        {props.label}
        {props.required && <span className="required" aria-label="required"> *</span>}
      </label>
      {props.children}
      {props.help && <div className="help" id={helpId}>{props.help}</div>}
      {props.problems?.map((m, i) => <div key={i} className="field-issue" role="alert">{m}</div>)}
    </div>
  );
}

interface SettingProps {
  spec: SettingSpec;
  nodeId: string;
  value: string;
  issues: Issue[];
  operators: ConditionOperator[];
  projectId: number;
  loadResources: ResourceLoader;
  readOnly?: boolean;
  onChange: (value: string) => void;
}

function SettingField({ spec, nodeId, value, issues, operators, projectId, loadResources,
                        readOnly, onChange }: SettingProps) {
  const id = `${nodeId}-cfg-${spec.name}`;
  const local = localProblem(spec, value);
  const problems = [...(local ? [local] : []), ...issues.map((i) => i.message)]
    .filter((m, i, all) => all.indexOf(m) === i);
  const range = spec.minimum !== null || spec.maximum !== null
    ? ` Range ${spec.minimum ?? "…"}–${spec.maximum ?? "…"}.` : "";
  const dflt = spec.default !== null && spec.default !== "" ? ` Default: ${spec.default}.` : "";
  const help = `${spec.help}${range}${dflt}`;
  const common = {
    id, "aria-describedby": `${id}-help`, "aria-invalid": problems.length > 0,
    "aria-required": spec.required, readOnly,
  };
  let control: React.ReactNode;
  if (spec.type === "template") {
    control = <textarea {...common} rows={3} value={value} placeholder={spec.default ?? ""}
                        onChange={(e) => onChange(e.target.value)} />;
  } else if (spec.type === "integer") {
    control = <input {...common} type="number" inputMode="numeric" value={value}
                     min={spec.minimum ?? undefined} max={spec.maximum ?? undefined}
                     placeholder={spec.default ?? ""} onChange={(e) => onChange(e.target.value)} />;
  } else if (spec.type === "choice") {
    control = (
      <select {...common} value={value} disabled={readOnly} onChange={(e) => onChange(e.target.value)}>
        <option value="">{spec.default ? `default (${spec.default})` : "—"}</option>
        {spec.choices.map((c) => <option key={c} value={c}>{c}</option>)}
      </select>
    );
  } else if (spec.resource) {
    control = <ResourcePicker common={common} kind={spec.resource} value={value}
                              projectId={projectId} loadResources={loadResources}
                              allowLlm={spec.resource === "model"} placeholder={spec.default ?? ""}
                              onChange={onChange} />;
  } else if (spec.type === "condition") {
    control = (
      <>
        <input {...common} value={value} placeholder="operator:argument, e.g. contains:refund"
               spellCheck={false} onChange={(e) => onChange(e.target.value)} />
        <details className="grammar">
          <summary>Condition grammar</summary>
          <ul>
            {operators.map((op) => (
              <li key={op.name}><code>{op.name}{op.argument ? `:${op.argument}` : ""}</code> — {op.help}</li>
            ))}
          </ul>
        </details>
      </>
    );
  } else {
    control = <input {...common} value={value} placeholder={spec.default ?? ""}
                     onChange={(e) => onChange(e.target.value)} />;
  }
  return (
    <Field label={spec.label} id={id} help={help} required={spec.required} problems={problems}>
      {control}
    </Field>
  );
}

interface PickerProps {
  common: Record<string, unknown>;
  kind: ResourceKind;
  value: string;
  projectId: number;
  loadResources: ResourceLoader;
  allowLlm: boolean;
  placeholder: string;
  onChange: (value: string) => void;
}

export function ResourcePicker(p: PickerProps) {
  const [list, setList] = useState<ResourceList | null>(null);
  const [failed, setFailed] = useState(false);
  const listId = useId();
  useEffect(() => {
    let live = true;
    p.loadResources(p.projectId, p.kind).then(
      (l) => live && setList(l), () => live && setFailed(true));
    return () => { live = false; };
  }, [p.projectId, p.kind, p.loadResources]);
  if (list === null && !failed) {
    return <input {...p.common} value={p.value} placeholder="loading…" onChange={(e) => p.onChange(e.target.value)} />;
  }
  if (list === "unavailable" || failed) {
    // No list on this server: type the ID.
    return (
      <>
        <input {...p.common} value={p.value} placeholder={p.placeholder || `${p.kind} ID`}
               spellCheck={false} onChange={(e) => p.onChange(e.target.value)} />
        <div className="muted small" data-testid="picker-fallback">Type the {p.kind.replace("_", " ")} ID.</div>
      </>
    );
  }
  const known = list!.some((r) => r.id === p.value) || (p.allowLlm && p.value === "llm") || p.value === "";
  const tool = list!.find((r) => r.id === p.value && r.mcpServer);
  return (
    <>
    <select {...p.common} value={p.value} data-list={listId}
            onChange={(e) => p.onChange(e.target.value)}>
      <option value="">{p.placeholder ? `default (${p.placeholder})` : "— choose —"}</option>
      {p.allowLlm && <option value="llm">llm — the platform model</option>}
      {list!.map((r) => (
        <option key={r.id} value={r.id} title={r.description}>
          {r.name ?? r.id}{r.name && r.name !== r.id && r.kind !== "version" ? ` (${r.id})` : ""}
        </option>
      ))}
      {!known && <option value={p.value}>{p.value} (not in this project)</option>}
    </select>
    {tool && <ToolInputSchema schema={tool.inputSchema} />}
    </>
  );
}
