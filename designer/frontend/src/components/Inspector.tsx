// The sidebar: Inspect (the selected node's settings, or the graph's), Run and Publish tabs.
import { useReactFlow } from "@xyflow/react";
import type { PinnedIssues } from "../graph";
import { loadResources } from "../resources";
import { isDirty } from "../store/derived";
import { useEditor } from "../store/editor";
import type { Tab } from "../store/state";
import { ConfigForm } from "./ConfigForm";
import { ConnectForm, GraphSettingsForm, IssueList, KeyHelp } from "./InspectorParts";
import { Lifecycle } from "./Lifecycle";
import { NodeRecords, PinnedNote } from "./NodeRecords";
import { RevisionHistory } from "./RevisionHistory";
import { RunPanel } from "./RunPanel";

const TAB_LABEL: Record<Tab, string> = { inspect: "Inspect", run: "Run", publish: "Publish" };

export function Inspector({ pinned }: { pinned: PinnedIssues }) {
  const tab = useEditor((s) => s.tab);
  const setTab = useEditor((s) => s.setTab);
  const design = useEditor((s) => s.design);
  const setDesign = useEditor((s) => s.setDesign);
  const canEdit = useEditor((s) => s.canEdit);
  const dirty = useEditor(isDirty);
  const nodes = useEditor((s) => s.nodes);
  const save = useEditor((s) => s.save);
  const setRunView = useEditor((s) => s.setRunView);
  return (
    <aside className="sidebar" aria-label="Inspector">
      <div className="tabs" role="tablist">
        {(["inspect", "run", "publish"] as const).map((t) => (
          <button type="button" role="tab" key={t} aria-selected={tab === t} className={tab === t ? "active" : ""}
                  onClick={() => setTab(t)} id={`tab-${t}`}>{TAB_LABEL[t]}</button>
        ))}
      </div>
      <div className="tab-body" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === "inspect" && <InspectTab pinned={pinned} />}
        {/* Always mounted: the run's stream goes on while another tab is shown. */}
        <div hidden={tab !== "run"}>
          <RunPanel designId={design.id} nodeIds={nodes.map((n) => n.id)} dirty={dirty} canEdit={canEdit}
                    saveFirst={() => save()} onView={setRunView} />
        </div>
        {tab === "publish" && (
          <>
            <Lifecycle design={design} dirty={dirty} canEdit={canEdit} onDesign={setDesign} />
            <RevisionHistory />
          </>
        )}
      </div>
    </aside>
  );
}

function InspectTab({ pinned }: { pinned: PinnedIssues }) {
  const flow = useReactFlow();
  const s = useEditor((x) => x);
  const chosen = s.nodes.filter((n) => n.selected);
  const selected = chosen.length === 1 ? chosen[0] : null;
  const comp = selected && selected.type === "kionga" ? s.byKind.get(selected.data.kind) : undefined;
  const run = selected ? s.runView?.nodes.get(selected.id) : undefined;
  const pin = selected ? s.outputPins.get(selected.id) : undefined;
  const pick = (id: string) => {
    s.selectOnly(id);
    const n = s.nodes.find((x) => x.id === id);
    if (n) void flow.setCenter(n.position.x + 90, n.position.y + 40, { zoom: 1, duration: 200 });
  };
  return (
    <>
      {selected && comp ? (
        <section aria-label="Node settings">
          <h2>{comp.label} <code className="muted">{selected.id}</code></h2>
          {(pinned.nodes.get(selected.id) ?? []).filter((i) => !/\.config\./.test(i.path ?? "")).map((i, k) => (
            <p key={k} className={`issue ${i.severity}`} role="alert">{i.message}</p>
          ))}
          <ConfigForm component={comp} nodeId={selected.id}
                      name={selected.data.name} group={selected.data.group} config={selected.data.config}
                      issues={pinned.settings.get(selected.id)} operators={s.registry.condition_operators}
                      projectId={s.design.project_id} loadResources={loadResources} readOnly={!s.canEdit}
                      onRename={(v) => s.rename(selected.id, v)}
                      onName={(v) => s.updateNode(selected.id, (d) => ({ ...d, name: v }))}
                      onGroup={(v) => s.updateNode(selected.id, (d) => ({ ...d, group: v }))}
                      onConfig={(k, v) => s.updateNode(selected.id, (d) => ({ ...d, config: { ...d.config, [k]: v } }))} />
          <ConnectForm node={selected} nodes={s.nodes} registry={s.registry} onConnect={s.connect} />
          {s.runView?.runId ? (
            <NodeRecords designId={s.design.id} runId={s.runView.runId} nodeId={selected.id} state={run}
                         runEnded={!["starting", "running"].includes(s.runView.status)} canEdit={s.canEdit}
                         onRerun={() => s.requestRerun({ fromRun: s.runView!.runId!, fromNode: selected.id })}
                         pin={pin} onPin={(port, value) => void s.pinOutput(selected.id, port, value)}
                         onUnpin={() => void s.unpinOutput(selected.id)} />
          ) : (
            <>
              {pin && <PinnedNote pin={pin} onUnpin={s.canEdit ? () => void s.unpinOutput(selected.id) : undefined} />}
              {run && (
                <div className="preview-box"><h3>Last run</h3>
                  <pre>{run.error ?? run.text ?? run.preview ?? run.status}</pre>
                </div>
              )}
            </>
          )}
        </section>
      ) : chosen.length > 1 ? (
        <p>{chosen.length} nodes selected. Copy, paste or delete them together.</p>
      ) : (
        <GraphSettingsForm settings={s.settings} readOnly={!s.canEdit} onChange={s.setSettings} />
      )}
      <IssueList issues={s.report?.report.issues ?? []} doc={s.report?.doc} onPick={pick} />
      <KeyHelp />
    </>
  );
}
