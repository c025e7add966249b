// The inspector's smaller parts: connect-by-keyboard, graph settings, the issue list, key help.
import { useState } from "react";
import type { Connection } from "@xyflow/react";
import type { CanvasNode } from "../graph";
import type { GraphDoc, GraphSettings, Registry, Report } from "../types";

export function ConnectForm({ node, nodes, registry, onConnect }: {
  node: CanvasNode; nodes: CanvasNode[]; registry: Registry; onConnect: (c: Connection) => void;
}) {
  const comp = registry.components.find((c) => c.kind === node.data.kind);
  const [port, setPort] = useState(comp?.outputs[0]?.name ?? "");
  const [target, setTarget] = useState("");
  if (!comp || comp.outputs.length === 0) return null;
  return (
    <fieldset className="connect-form">
      <legend>Connect (keyboard)</legend>
      <label htmlFor="connect-port">From output</label>
      <select id="connect-port" value={port} onChange={(e) => setPort(e.target.value)}>
        {comp.outputs.map((p) => <option key={p.name} value={p.name}>{p.name} ({p.types[0]})</option>)}
      </select>
      <label htmlFor="connect-target">To node</label>
      <select id="connect-target" value={target} onChange={(e) => setTarget(e.target.value)}>
        <option value="">— choose —</option>
        {nodes.filter((n) => n.id !== node.id).map((n) => <option key={n.id} value={n.id}>{n.id} ({n.data.kind})</option>)}
      </select>
      <button type="button" id="connect-button" disabled={!target}
              onClick={() => onConnect({ source: node.id, sourceHandle: port, target, targetHandle: "in" })}>Connect</button>
    </fieldset>
  );
}

export function GraphSettingsForm({ settings, readOnly, onChange }: {
  settings: GraphSettings; readOnly: boolean; onChange: (s: GraphSettings) => void;
}) {
  const fields: [keyof GraphSettings, string, number, number, number][] = [
    ["max_steps", "Max steps", 1, 200, 50], ["timeout_seconds", "Timeout (s)", 1, 300, 60],
    ["max_tokens", "Max tokens", 1, 1_000_000, 50_000],
  ];
  return (
    <section aria-label="Graph settings">
      <h2>Graph settings</h2>
      <p className="muted small">Select a node to edit it. Drag from the palette or press Enter on an item to add one.</p>
      {fields.map(([key, label, min, max, dflt]) => (
        <div className="field" key={key}>
          <label htmlFor={`gs-${key}`}>{label}</label>
          <input id={`gs-${key}`} type="number" min={min} max={max} placeholder={String(dflt)} readOnly={readOnly}
                 value={settings[key] ?? ""} onChange={(e) => {
                   const v = e.target.value;
                   const next = { ...settings };
                   if (v === "") delete next[key]; else next[key] = Number(v);
                   onChange(next);
                 }} />
          <div className="help">{min}–{max.toLocaleString()}, default {dflt.toLocaleString()}.</div>
        </div>
      ))}
    </section>
  );
}

export function IssueList({ issues, doc, onPick }: { issues: Report["issues"]; doc?: GraphDoc; onPick: (id: string) => void }) {
  if (!issues.length) return <p className="ok-text small" data-testid="no-issues">No issues.</p>;
  return (
    <section aria-label="Validation issues">
      <h3>Issues ({issues.length})</h3>
      <ul className="issues" data-testid="issues">
        {issues.map((i, k) => {
          const m = /^nodes\.(\d+)/.exec(i.path ?? "");
          const id = i.node_id ?? (m && doc ? doc.nodes[Number(m[1])]?.id : undefined);
          return (
            <li key={k} className={`issue ${i.severity}`}>
              {id ? <button type="button" className="link" onClick={() => onPick(id)}>{id}</button> : null}
              {" "}{i.message} {i.path && <code className="muted">{i.path}</code>}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

export function KeyHelp() {
  return (
    <details className="keys small">
      <summary>Keyboard shortcuts</summary>
      <ul>
        <li><kbd>/</kbd> palette search · <kbd>Enter</kbd> adds the focused component</li>
        <li><kbd>Ctrl</kbd>+<kbd>Z</kbd> undo · <kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>Z</kbd> redo</li>
        <li><kbd>Ctrl</kbd>+<kbd>C</kbd>/<kbd>V</kbd> copy/paste · <kbd>Del</kbd> delete</li>
        <li><kbd>Ctrl</kbd>+<kbd>A</kbd> select all · <kbd>Shift</kbd>+drag box select</li>
        <li><kbd>F</kbd> zoom to fit · <kbd>Ctrl</kbd>+<kbd>S</kbd> save · <kbd>Tab</kbd> moves between nodes</li>
      </ul>
    </details>
  );
}
