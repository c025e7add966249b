// One node on the canvas: its ports (with compatibility hints while a wire is drawn),
// its issues, and its run state.
import { memo, useContext } from "react";
import { Handle, Position, useConnection, type NodeProps } from "@xyflow/react";
import { CanvasContext } from "../context";
import { compatibleTargets } from "../compat";
import type { CanvasNode } from "../graph";

const STATUS_LABEL: Record<string, string> = {
  running: "running", completed: "completed", skipped: "skipped", failed: "failed",
  retrying: "retrying", waiting: "waiting for approval",
};

function KiongaNode({ id, data, selected }: NodeProps<CanvasNode>) {
  const ctx = useContext(CanvasContext)!;
  const comp = ctx.byKind.get(data.kind);
  const hint = useConnection((c) => {
    if (!c.inProgress || c.fromHandle?.type !== "source" || c.fromNode.id === id) return "";
    const fromKind = (c.fromNode.data as { kind: string }).kind;
    return compatibleTargets(ctx.registry, fromKind, c.fromHandle.id ?? "out", data.kind)
      ? "compatible" : "incompatible";
  });
  const issues = ctx.pinned.nodes.get(id) ?? [];
  const errors = issues.filter((i) => i.severity === "error").length;
  const run = ctx.runStates.get(id);
  const pin = ctx.outputPins?.get(id);
  const outputs = comp?.outputs ?? [];
  const cls = ["k-node", `kind-${data.kind}`, selected ? "selected" : "", hint, pin ? "pinned-output" : "",
               run ? `st-${run.status}` : "", errors ? "has-errors" : issues.length ? "has-warnings" : ""];
  const label = data.name || comp?.label || data.kind;
  return (
    <div className={cls.join(" ")} data-node-id={id} data-status={run?.status ?? ""}
         aria-label={`${comp?.label ?? data.kind} node ${label}${run ? `, ${STATUS_LABEL[run.status]}` : ""}${issues.length ? `, ${issues.length} issue(s)` : ""}${pin ? ", output pinned" : ""}`}>
      {comp && comp.inputs.length > 0 && (
        <Handle type="target" position={Position.Left} id={comp.inputs[0].name}
                className={"port port-in " + hint}
                title={`in — accepts ${comp.inputs[0].types.join(", ")}`} />
      )}
      <div className="k-head">
        <span className="k-kind">{comp?.label ?? data.kind}</span>
        {issues.length > 0 && (
          <span className={"k-badge " + (errors ? "err" : "warn")} data-testid="node-issues"
                title={issues.map((i) => i.message).join("\n")}>{issues.length}</span>
        )}
        {pin && (
          <span className="k-pin" data-testid="node-pinned"
                title={`Output pinned on ${pin.port}: design runs repeat it instead of running this node`}>
            pinned{pin.port !== (outputs[0]?.name ?? "out") ? ` → ${pin.port}` : ""}
          </span>
        )}
        {run && <span className={`k-state st-${run.status}`} data-testid="node-state">{STATUS_LABEL[run.status]}{run.port && run.status === "completed" && outputs.length > 1 ? ` → ${run.port}` : ""}</span>}
      </div>
      <div className="k-title">{label}</div>
      <div className="k-id">{id}{data.group ? <span className="k-group"> · {data.group}</span> : null}</div>
      {run && (run.tokens !== undefined || run.ms !== undefined) && (
        <div className="k-usage muted small" data-testid="node-usage">
          {run.reused ? "reused · " : ""}{run.tokens ?? 0} tokens{run.ms !== undefined ? ` · ${formatMs(run.ms)}` : ""}
        </div>
      )}
      {(run?.text || run?.preview || run?.error) && (
        <div className="k-preview" data-testid="node-preview">{(run.error ?? run.text ?? run.preview ?? "").slice(0, 160)}</div>
      )}
      <div className="k-outs">
        {outputs.map((p) => (
          <div className="k-out" key={p.name}>
            <span className="k-port-name">{p.name}</span>
            <Handle type="source" position={Position.Right} id={p.name}
                    className={"port port-out" + (p.name === "error" ? " port-error" : "")}
                    title={`${p.name} — sends ${p.types[0]}`} />
          </div>
        ))}
      </div>
    </div>
  );
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export const NodeView = memo(KiongaNode);

export function GroupFrame({ data }: NodeProps) {
  return <div className="k-frame" aria-hidden="true"><span>{String(data.label)}</span></div>;
}
