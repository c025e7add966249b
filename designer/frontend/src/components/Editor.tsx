// The canvas of one design: palette, graph, inspector, validation, save, run, lifecycle.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, applyEdgeChanges, applyNodeChanges,
  useReactFlow, type Connection, type EdgeChange, type NodeChange,
} from "@xyflow/react";
import { api, ApiError } from "../api";
import { checkConnection } from "../compat";
import { CanvasContext, type CanvasState } from "../context";
import { describeChanges, mergeDocs } from "../diff";
import {
  edgeId, freshId, fromDoc, pinIssues, renameNode, renameProblem, toDoc,
  type CanvasEdge, type CanvasNode,
} from "../graph";
import { record, redo, undo, type History } from "../history";
import { loadResources } from "../resources";
import type { RunView } from "../runstate";
import type { Design, GraphDoc, GraphSettings, Registry, Report } from "../types";
import { ConfigForm } from "./ConfigForm";
import { Lifecycle } from "./Lifecycle";
import { GroupFrame, NodeView } from "./NodeView";
import { Palette } from "./Palette";
import { RunPanel } from "./RunPanel";
import { SiteMenu, type SiteConfig } from "./SiteNav";

const NODE_TYPES = { kionga: NodeView, frame: GroupFrame };
const VALIDATE_DEBOUNCE_MS = 400;
const AUTOSAVE_MS = 1500;
const KIND_MIME = "application/x-kionga-kind";

interface Snapshot {
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  settings: GraphSettings;
}

interface Conflict {
  current: Design;
  theirs: string[];
  mine: string[];
}

interface Props {
  design: Design;
  registry: Registry;
  canEdit: boolean;
  homeUrl: string;
  site: SiteConfig;
}

export function Editor(props: Props) {
  return (
    <ReactFlowProvider>
      <EditorInner {...props} />
    </ReactFlowProvider>
  );
}

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

function EditorInner({ design: initial, registry, canEdit, homeUrl, site }: Props) {
  const flow = useReactFlow<CanvasNode, CanvasEdge>();
  const byKind = useMemo(() => new Map(registry.components.map((c) => [c.kind, c])), [registry]);
  const first = useMemo(() => fromDoc(initial.graph, registry), [initial, registry]);
  const [design, setDesign] = useState(initial);
  const [name, setName] = useState(initial.name);
  const [nodes, setNodes] = useState<CanvasNode[]>(first.nodes);
  const [edges, setEdges] = useState<CanvasEdge[]>(first.edges);
  const [settings, setSettings] = useState<GraphSettings>(initial.graph.settings ?? {});
  const [history, setHistory] = useState<History<Snapshot>>({ past: [], future: [] });
  const [report, setReport] = useState<{ report: Report; doc: GraphDoc } | null>(null);
  const [validating, setValidating] = useState(false);
  const [notice, setNotice] = useState<{ text: string; kind: "info" | "error" } | null>(null);
  const [saving, setSaving] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [autosave, setAutosave] = useState(false);
  const [tab, setTab] = useState<"inspect" | "run" | "publish">(
    () => (/[#&]run=/.test(window.location.hash) ? "run" : "inspect"));
  const [runView, setRunView] = useState<RunView | null>(null);
  const [savedKey, setSavedKey] = useState(() =>
    JSON.stringify(toDoc(first.nodes, first.edges, initial.graph.settings ?? {}, initial.name)));
  const clipboard = useRef<{ nodes: CanvasNode[]; edges: CanvasEdge[] } | null>(null);
  const recordedThisTick = useRef(false);
  const paneRef = useRef<HTMLDivElement>(null);

  const realNodes = nodes;
  const doc = useMemo(() => toDoc(realNodes, edges, settings, name), [realNodes, edges, settings, name]);
  const docKey = useMemo(() => JSON.stringify(doc), [doc]);
  const dirty = docKey !== savedKey;

  const say = useCallback((text: string, kind: "info" | "error" = "info") => setNotice({ text, kind }), []);

  // ---- history -------------------------------------------------------------------
  const snapshot = useCallback((): Snapshot => ({ nodes, edges, settings }), [nodes, edges, settings]);
  const remember = useCallback(() => {
    if (recordedThisTick.current) return;
    recordedThisTick.current = true;
    queueMicrotask(() => { recordedThisTick.current = false; });
    setHistory((h) => record(h, snapshot()));
  }, [snapshot]);
  const restore = (s: Snapshot) => { setNodes(s.nodes); setEdges(s.edges); setSettings(s.settings); };
  const doUndo = useCallback(() => {
    const r = undo(history, snapshot());
    if (r) { setHistory(r.history); restore(r.value); }
  }, [history, snapshot]);
  const doRedo = useCallback(() => {
    const r = redo(history, snapshot());
    if (r) { setHistory(r.history); restore(r.value); }
  }, [history, snapshot]);

  // ---- graph edits ---------------------------------------------------------------
  const onNodesChange = useCallback((changes: NodeChange<CanvasNode>[]) => {
    if (!canEdit) changes = changes.filter((c) => c.type === "select" || c.type === "dimensions");
    if (changes.some((c) => c.type === "remove")) remember();
    setNodes((ns) => applyNodeChanges(changes, ns));
  }, [canEdit, remember]);
  const onEdgesChange = useCallback((changes: EdgeChange<CanvasEdge>[]) => {
    if (!canEdit) changes = changes.filter((c) => c.type === "select");
    if (changes.some((c) => c.type === "remove")) remember();
    setEdges((es) => applyEdgeChanges(changes, es));
  }, [canEdit, remember]);

  const connect = useCallback((c: Connection) => {
    const src = nodes.find((n) => n.id === c.source);
    const dst = nodes.find((n) => n.id === c.target);
    if (!src || !dst) return;
    const fromPort = c.sourceHandle ?? byKind.get(src.data.kind)?.outputs[0]?.name ?? "out";
    const toPort = c.targetHandle ?? "in";
    const verdict = checkConnection(registry, {
      source: src.id, sourceKind: src.data.kind, sourcePort: fromPort, sourceConfig: src.data.config,
      target: dst.id, targetKind: dst.data.kind, targetPort: toPort,
    }, edges.map((e) => ({ from: e.source, to: e.target, from_port: e.sourceHandle ?? "out", to_port: e.targetHandle ?? "in" })));
    if (!verdict.ok) {
      say(`Edge refused: ${verdict.reason}`, "error");
      return;
    }
    remember();
    setEdges((es) => [...es, {
      id: edgeId(src.id, fromPort, dst.id, toPort), source: src.id, target: dst.id,
      sourceHandle: fromPort, targetHandle: toPort,
    }]);
    say(`Connected ${src.id}.${fromPort} → ${dst.id} (${verdict.reason}).`);
  }, [nodes, edges, byKind, registry, remember, say]);

  const addNode = useCallback((kind: string, position?: { x: number; y: number }) => {
    if (!canEdit) return;
    const comp = byKind.get(kind);
    if (!comp) return;
    let pos = position;
    if (!pos) {
      const rect = paneRef.current?.getBoundingClientRect();
      const center = rect ? { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 } : { x: 400, y: 300 };
      const c = flow.screenToFlowPosition(center);
      pos = freeSpot(nodes, { x: c.x - 90, y: c.y - 40 });
    }
    const id = freshId(kind, new Set(nodes.map((n) => n.id)));
    const config: Record<string, string> = {};
    remember();
    setNodes((ns) => [
      ...ns.map((n) => (n.selected ? { ...n, selected: false } : n)),
      { id, type: "kionga", position: pos!, selected: true,
        data: { kind, name: "", group: "", config } },
    ]);
    setTab("inspect");
    say(`Added ${comp.label} node ${id}.`);
  }, [canEdit, byKind, flow, nodes, remember, say]);

  const onDrop = useCallback((e: React.DragEvent) => {
    const kind = e.dataTransfer.getData(KIND_MIME);
    if (!kind) return;
    e.preventDefault();
    const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    addNode(kind, { x: p.x - 90, y: p.y - 30 });
  }, [flow, addNode]);

  const updateNode = useCallback((id: string, patch: (d: CanvasNode["data"]) => CanvasNode["data"]) => {
    remember();
    setNodes((ns) => ns.map((n) => (n.id === id ? { ...n, data: patch(n.data) } : n)));
  }, [remember]);

  const rename = useCallback((from: string, to: string): string | null => {
    const problem = renameProblem(from, to, nodes.map((n) => n.id));
    if (problem || from === to) return problem;
    remember();
    const renamed = renameNode(nodes, edges, from, to);
    setNodes(renamed.nodes);
    setEdges(renamed.edges);
    say(`Renamed node ${from} to ${to}.`);
    return null;
  }, [nodes, edges, remember, say]);

  const selectedNodes = nodes.filter((n) => n.selected);
  const selectedEdges = edges.filter((e) => e.selected);

  const copy = useCallback(() => {
    const ids = new Set(selectedNodes.map((n) => n.id));
    if (!ids.size) return;
    clipboard.current = {
      nodes: selectedNodes.map((n) => structuredClone(n)),
      edges: edges.filter((e) => ids.has(e.source) && ids.has(e.target)),
    };
    say(`Copied ${ids.size} node(s).`);
  }, [selectedNodes, edges, say]);

  const paste = useCallback(() => {
    const clip = clipboard.current;
    if (!clip || !canEdit) return;
    const taken = new Set(nodes.map((n) => n.id));
    const rename = new Map<string, string>();
    const pasted = clip.nodes.map((n) => {
      const id = freshId(n.data.kind, taken);
      taken.add(id);
      rename.set(n.id, id);
      return { ...structuredClone(n), id, selected: true, position: { x: n.position.x + 40, y: n.position.y + 40 } };
    });
    const pastedEdges = clip.edges.map((e) => {
      const s = rename.get(e.source)!, t = rename.get(e.target)!;
      return { ...e, id: edgeId(s, e.sourceHandle ?? "out", t, e.targetHandle ?? "in"), source: s, target: t, selected: false };
    });
    remember();
    setNodes((ns) => [...ns.map((n) => ({ ...n, selected: false })), ...pasted]);
    setEdges((es) => [...es, ...pastedEdges]);
    clipboard.current = { nodes: pasted, edges: pastedEdges };
    say(`Pasted ${pasted.length} node(s).`);
  }, [canEdit, nodes, remember, say]);

  const deleteSelected = useCallback(() => {
    if (!canEdit) return;
    const ids = new Set(selectedNodes.map((n) => n.id));
    if (!ids.size && !selectedEdges.length) return;
    remember();
    setNodes((ns) => ns.filter((n) => !ids.has(n.id)));
    setEdges((es) => es.filter((e) => !e.selected && !ids.has(e.source) && !ids.has(e.target)));
  }, [canEdit, selectedNodes, selectedEdges, remember]);

  // ---- validation (debounced) ----------------------------------------------------
  const validationSeq = useRef(0);
  useEffect(() => {
    const seq = ++validationSeq.current;
    setValidating(true);
    const sent = JSON.parse(docKey) as GraphDoc;
    const timer = window.setTimeout(() => {
      api<Report>("POST", `/agent-designs/${design.id}/validate`, sent).then(
        (r) => { if (seq === validationSeq.current) { setReport({ report: r, doc: sent }); setValidating(false); } },
        (e) => { if (seq === validationSeq.current) { setValidating(false); say(`Validation failed: ${e instanceof ApiError ? e.message : e}`, "error"); } },
      );
    }, VALIDATE_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [docKey, design.id, say]);

  const pinned = useMemo(() => (report ? pinIssues(report.report.issues, report.doc)
    : pinIssues([], doc)), [report, doc]);

  // ---- save ----------------------------------------------------------------------
  const save = useCallback(async (revision = design.revision): Promise<boolean> => {
    if (!canEdit) return false;
    setSaving(true);
    const sentKey = docKey;
    try {
      const saved = await api<Design>("PUT", `/agent-designs/${design.id}`, {
        revision, graph: JSON.parse(sentKey), name,
      });
      setDesign(saved);
      setSavedKey(sentKey);
      setConflict(null);
      say(`Saved revision ${saved.revision}.`);
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && e.code === "stale_revision") {
        const current = await api<Design>("GET", `/agent-designs/${design.id}`);
        const base = JSON.parse(savedKey) as GraphDoc;
        setConflict({
          current,
          theirs: describeChanges(base, current.graph),
          mine: describeChanges(base, JSON.parse(sentKey) as GraphDoc),
        });
        say(`Not saved: revision ${current.revision} was saved by someone else meanwhile.`, "error");
      } else {
        say(`Not saved: ${e instanceof ApiError ? e.message : e}`, "error");
      }
      return false;
    } finally {
      setSaving(false);
    }
  }, [canEdit, design, docKey, name, savedKey, say]);

  const reloadTheirs = () => {
    if (!conflict) return;
    const g = fromDoc(conflict.current.graph, registry);
    remember();
    setNodes(g.nodes); setEdges(g.edges); setSettings(conflict.current.graph.settings ?? {});
    setName(conflict.current.name);
    setDesign(conflict.current);
    setSavedKey(JSON.stringify(toDoc(g.nodes, g.edges, conflict.current.graph.settings ?? {}, conflict.current.name)));
    setConflict(null);
    say(`Reloaded revision ${conflict.current.revision}; your edit was discarded (Undo brings it back).`);
  };
  const reapplyMine = () => {
    if (!conflict) return;
    // My edit (saved → now) onto their revision, then save over it.
    const merged = mergeDocs(JSON.parse(savedKey) as GraphDoc, doc, conflict.current.graph);
    const g = fromDoc(merged, registry);
    const chosen = new Set(nodes.filter((n) => n.selected).map((n) => n.id));
    g.nodes = g.nodes.map((n) => (chosen.has(n.id) ? { ...n, selected: true } : n));
    remember();
    setNodes(g.nodes); setEdges(g.edges); setSettings(merged.settings ?? {});
    setName(merged.name ?? name);
    setDesign(conflict.current);
    setSavedKey(JSON.stringify(toDoc(
      fromDoc(conflict.current.graph, registry).nodes, fromDoc(conflict.current.graph, registry).edges,
      conflict.current.graph.settings ?? {}, conflict.current.name)));
    setConflict(null);
    setReapply(conflict.current.revision);
  };
  // Save once the merged canvas is in state (its docKey is what save() sends).
  const [reapply, setReapply] = useState<number | null>(null);
  useEffect(() => {
    if (reapply === null) return;
    setReapply(null);
    void save(reapply);
  }, [reapply, save]);

  useEffect(() => {
    if (!autosave || !dirty || conflict || saving) return;
    const t = window.setTimeout(() => { void save(); }, AUTOSAVE_MS);
    return () => window.clearTimeout(t);
  }, [autosave, dirty, conflict, saving, docKey, save]);

  useEffect(() => {
    const guard = (e: BeforeUnloadEvent) => {
      if (!dirty) return;
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", guard);
    return () => window.removeEventListener("beforeunload", guard);
  }, [dirty]);

  // ---- keyboard shortcuts --------------------------------------------------------
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && key === "s") { e.preventDefault(); void save(); return; }
      if (isTyping(e.target)) return;
      if (mod && key === "z" && !e.shiftKey) { e.preventDefault(); doUndo(); }
      else if (mod && (key === "y" || (key === "z" && e.shiftKey))) { e.preventDefault(); doRedo(); }
      else if (mod && key === "c") { copy(); }
      else if (mod && key === "v") { e.preventDefault(); paste(); }
      else if (mod && key === "a") {
        e.preventDefault();
        setNodes((ns) => ns.map((n) => ({ ...n, selected: true })));
      } else if (!mod && key === "f") { void flow.fitView({ duration: 200 }); }
      else if (!mod && key === "/") {
        e.preventDefault();
        document.getElementById("palette-search")?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [save, doUndo, doRedo, copy, paste, flow]);

  // ---- derived view --------------------------------------------------------------
  const runStates = useMemo(() => runView?.nodes ?? new Map(), [runView]);
  const ctx: CanvasState = useMemo(() => ({ registry, byKind, pinned, runStates }),
    [registry, byKind, pinned, runStates]);

  const frames = useMemo(() => groupFrames(nodes), [nodes]);
  const shownNodes = useMemo(() => (frames.length ? [...frames, ...nodes] : nodes), [frames, nodes]);
  const shownEdges = useMemo(() => edges.map((e) => {
    const issues = pinned.edges.get(e.id);
    const state = runStates.get(e.source);
    const taken = state?.status === "completed" && (state.port ?? e.sourceHandle) === e.sourceHandle;
    const cls = [issues ? "edge-issue" : "", taken ? "edge-taken" : "", e.sourceHandle === "error" ? "edge-error" : ""].join(" ").trim();
    return cls || issues ? { ...e, className: cls, animated: taken && runView?.status === "running",
                             ...(issues ? { label: "⚠", ariaLabel: issues.map((i) => i.message).join(" ") } : {}) } : e;
  }), [edges, pinned, runStates, runView]);

  const selected = selectedNodes.length === 1 ? selectedNodes[0] : null;
  const issues = report?.report.issues ?? [];
  const errors = issues.filter((i) => i.severity === "error").length;
  const hash = report?.report.content_sha256 ?? null;
  const savedHash = design.validation?.content_sha256 ?? null;

  return (
    <CanvasContext.Provider value={ctx}>
      <div className="editor">
        <header className="topbar">
          <a className="brand" href={homeUrl} aria-label="All designs">◆ Kionga</a>
          <label className="sr-only" htmlFor="design-name">Design name</label>
          <input id="design-name" className="design-name" value={name} readOnly={!canEdit}
                 onChange={(e) => setName(e.target.value)} />
          <span className="muted small" data-testid="revision">rev {design.revision}{dirty ? " · unsaved" : ""}</span>
          <span className={"badge " + (validating ? "pending" : report?.report.runnable ? "ok" : "bad")}
                data-testid="runnable" role="status" aria-live="polite">
            {validating ? "checking…" : report ? (report.report.runnable ? "✓ runnable" : `✕ ${errors} error${errors === 1 ? "" : "s"}`) : "…"}
          </span>
          <span className="hash" data-testid="hash" data-hash={hash ?? ""}
                title={hash ? `Behaviour hash ${hash}${savedHash && hash === savedHash ? " (same as the saved revision)" : ""}` : "No hash: the graph does not normalize."}>
            # {hash ? hash.slice(0, 12) : "—"}{hash && savedHash && hash === savedHash ? " · as saved" : ""}
          </span>
          <span className="spacer" />
          <div className="toolbar" role="toolbar" aria-label="Canvas">
            <button type="button" onClick={doUndo} disabled={!history.past.length} title="Undo (Ctrl+Z)">Undo</button>
            <button type="button" onClick={doRedo} disabled={!history.future.length} title="Redo (Ctrl+Shift+Z)">Redo</button>
            <button type="button" onClick={copy} disabled={!selectedNodes.length} title="Copy (Ctrl+C)">Copy</button>
            <button type="button" onClick={paste} disabled={!canEdit} title="Paste (Ctrl+V)">Paste</button>
            <button type="button" onClick={deleteSelected} disabled={!canEdit || (!selectedNodes.length && !selectedEdges.length)} title="Delete (Del)">Delete</button>
            <button type="button" onClick={() => void flow.fitView({ duration: 200 })} title="Zoom to fit (F)">Fit</button>
            <label className="check small" title="Save automatically after each change">
              <input type="checkbox" checked={autosave} onChange={(e) => setAutosave(e.target.checked)} /> Autosave
            </label>
            <button type="button" className="primary" onClick={() => void save()} disabled={!canEdit || saving || (!dirty && !conflict)} title="Save (Ctrl+S)">
              {saving ? "Saving…" : "Save"}
            </button>
          </div>
          <SiteMenu site={site} current="designer" />
        </header>
        {notice && !conflict && (
          <div className={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"} data-testid="notice">
            {notice.text}
            <button type="button" className="link" aria-label="Dismiss" onClick={() => setNotice(null)}>×</button>
          </div>
        )}
        {conflict && (
          <div className="conflict" role="alertdialog" aria-labelledby="conflict-title" data-testid="conflict">
            <h2 id="conflict-title">Someone saved revision {conflict.current.revision} meanwhile</h2>
            <div className="cols">
              <div><h3>Their changes</h3><ul>{conflict.theirs.length ? conflict.theirs.map((t, i) => <li key={i}>{t}</li>) : <li>name or description only</li>}</ul></div>
              <div><h3>Your unsaved changes</h3><ul>{conflict.mine.length ? conflict.mine.map((t, i) => <li key={i}>{t}</li>) : <li>none</li>}</ul></div>
            </div>
            <div className="row">
              <button type="button" onClick={reloadTheirs}>Reload theirs (drop mine)</button>
              <button type="button" className="primary" onClick={reapplyMine}>Re-apply my changes on revision {conflict.current.revision}</button>
            </div>
          </div>
        )}
        <div className="workspace">
          <Palette components={registry.components} onAdd={(k) => addNode(k)} mime={KIND_MIME} disabled={!canEdit} />
          <main className="canvas" ref={paneRef} aria-label="Graph canvas"
                onDragOver={(e) => { if (e.dataTransfer.types.includes(KIND_MIME)) { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; } }}
                onDrop={onDrop}>
            <ReactFlow<CanvasNode, CanvasEdge>
              nodes={shownNodes} edges={shownEdges} nodeTypes={NODE_TYPES}
              onNodesChange={onNodesChange} onEdgesChange={onEdgesChange} onConnect={connect}
              onNodeDragStart={() => remember()}
              onlyRenderVisibleElements fitView minZoom={0.1} maxZoom={2}
              deleteKeyCode={canEdit ? ["Delete", "Backspace"] : null}
              multiSelectionKeyCode={["Shift", "Meta", "Control"]}
              selectionKeyCode="Shift" proOptions={{ hideAttribution: true }}
              nodesConnectable={canEdit} nodesDraggable={canEdit}
              defaultEdgeOptions={{ interactionWidth: 16 }}>
              <Background gap={20} size={1} />
              <Controls showInteractive={false} aria-label="Zoom controls" />
              {nodes.length <= 150 && <MiniMap pannable zoomable ariaLabel="Mini map" nodeStrokeWidth={2}
                                                style={{ width: 150, height: 100 }} />}
            </ReactFlow>
          </main>
          <aside className="sidebar" aria-label="Inspector">
            <div className="tabs" role="tablist">
              {(["inspect", "run", "publish"] as const).map((t) => (
                <button type="button" role="tab" key={t} aria-selected={tab === t} className={tab === t ? "active" : ""}
                        onClick={() => setTab(t)} id={`tab-${t}`}>{t === "inspect" ? "Inspect" : t === "run" ? "Run" : "Publish"}</button>
              ))}
            </div>
            <div className="tab-body" role="tabpanel" aria-labelledby={`tab-${tab}`}>
              {tab === "inspect" && (
                <>
                  {selected && selected.type === "kionga" && byKind.get(selected.data.kind) ? (
                    <section aria-label="Node settings">
                      <h2>{byKind.get(selected.data.kind)!.label} <code className="muted">{selected.id}</code></h2>
                      {(pinned.nodes.get(selected.id) ?? []).filter((i) => !/\.config\./.test(i.path ?? "")).map((i, k) => (
                        <p key={k} className={`issue ${i.severity}`} role="alert">{i.message}</p>
                      ))}
                      <ConfigForm component={byKind.get(selected.data.kind)!} nodeId={selected.id}
                                  name={selected.data.name} group={selected.data.group} config={selected.data.config}
                                  issues={pinned.settings.get(selected.id)} operators={registry.condition_operators}
                                  projectId={design.project_id} loadResources={loadResources} readOnly={!canEdit}
                                  onRename={(v) => rename(selected.id, v)}
                                  onName={(v) => updateNode(selected.id, (d) => ({ ...d, name: v }))}
                                  onGroup={(v) => updateNode(selected.id, (d) => ({ ...d, group: v }))}
                                  onConfig={(k, v) => updateNode(selected.id, (d) => ({ ...d, config: { ...d.config, [k]: v } }))} />
                      <ConnectForm node={selected} nodes={nodes} registry={registry} onConnect={connect} />
                      {runStates.get(selected.id) && (
                        <div className="preview-box"><h3>Last run</h3>
                          <pre>{runStates.get(selected.id)!.error ?? runStates.get(selected.id)!.text ?? runStates.get(selected.id)!.preview ?? runStates.get(selected.id)!.status}</pre>
                        </div>
                      )}
                    </section>
                  ) : selectedNodes.length > 1 ? (
                    <p>{selectedNodes.length} nodes selected. Copy, paste or delete them together.</p>
                  ) : (
                    <GraphSettingsForm settings={settings} readOnly={!canEdit}
                      onChange={(s) => { remember(); setSettings(s); }} />
                  )}
                  <IssueList issues={issues} doc={report?.doc} onPick={(id) => {
                    setNodes((ns) => ns.map((n) => ({ ...n, selected: n.id === id })));
                    const n = nodes.find((x) => x.id === id);
                    if (n) void flow.setCenter(n.position.x + 90, n.position.y + 40, { zoom: 1, duration: 200 });
                  }} />
                  <KeyHelp />
                </>
              )}
              {/* Always mounted: the run's stream goes on while another tab is shown. */}
              <div hidden={tab !== "run"}>
                <RunPanel designId={design.id} nodeIds={nodes.map((n) => n.id)} dirty={dirty} canEdit={canEdit}
                          saveFirst={() => save()} onView={setRunView} />
              </div>
              {tab === "publish" && <Lifecycle design={design} dirty={dirty} canEdit={canEdit} onDesign={setDesign} />}
            </div>
          </aside>
        </div>
      </div>
    </CanvasContext.Provider>
  );
}

/** The first place near `want` (below, then above, then beside) where a new node does not
 * cover another one: a node added from the keyboard lands in view, and visible. */
function freeSpot(nodes: CanvasNode[], want: { x: number; y: number }): { x: number; y: number } {
  const W = 200, H = 110;
  const clear = (p: { x: number; y: number }) => nodes.every((n) => {
    const w = n.measured?.width ?? 180, h = n.measured?.height ?? 90;
    return p.x + W <= n.position.x || n.position.x + w + 20 <= p.x
      || p.y + H <= n.position.y || n.position.y + h + 20 <= p.y;
  });
  for (let ring = 0; ring < 6; ring++) {
    for (const [dx, dy] of [[0, 1], [0, -1], [1, 0], [-1, 0], [1, 1], [-1, 1], [1, -1], [-1, -1]]) {
      const p = { x: want.x + dx * ring * 110, y: want.y + dy * ring * 70 };
      if (clear(p)) return p;
    }
  }
  return { x: want.x + (nodes.length % 5) * 16, y: want.y + (nodes.length % 5) * 16 };
}

function groupFrames(nodes: CanvasNode[]): CanvasNode[] {
  const boxes = new Map<string, { x0: number; y0: number; x1: number; y1: number }>();
  for (const n of nodes) {
    if (!n.data.group) continue;
    const w = n.measured?.width ?? 180, h = n.measured?.height ?? 90;
    const b = boxes.get(n.data.group);
    const x0 = n.position.x, y0 = n.position.y, x1 = x0 + w, y1 = y0 + h;
    boxes.set(n.data.group, b ? { x0: Math.min(b.x0, x0), y0: Math.min(b.y0, y0), x1: Math.max(b.x1, x1), y1: Math.max(b.y1, y1) }
      : { x0, y0, x1, y1 });
  }
  // Fixed width/height (not only style): the frames are derived, so React Flow's measured
  // dimensions never come back to them, and a node without dimensions stays hidden.
  return [...boxes].map(([group, b]) => {
    const width = b.x1 - b.x0 + 32, height = b.y1 - b.y0 + 46;
    return {
      id: `frame:${group}`, type: "frame", position: { x: b.x0 - 16, y: b.y0 - 30 }, width, height,
      data: { label: group } as unknown as CanvasNode["data"], selectable: false, draggable: false, connectable: false, focusable: false,
      zIndex: -1, style: { width, height, pointerEvents: "none" as const },
    };
  });
}

function ConnectForm({ node, nodes, registry, onConnect }: {
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

function GraphSettingsForm({ settings, readOnly, onChange }: {
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

function IssueList({ issues, doc, onPick }: { issues: Report["issues"]; doc?: GraphDoc; onPick: (id: string) => void }) {
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

function KeyHelp() {
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
