// The palette and the graph canvas: React Flow fed from the store (nodes plus the derived
// group frames, edges decorated with issues and the run's path), drop and click to add.
import { useCallback, useMemo, useRef } from "react";
import { Background, Controls, MiniMap, ReactFlow, useReactFlow } from "@xyflow/react";
import type { CanvasEdge, CanvasNode, PinnedIssues } from "../graph";
import { decorateEdges, freeSpot, groupFrames } from "../layout";
import { useEditor } from "../store/editor";
import { GroupFrame, NodeView } from "./NodeView";
import { Palette } from "./Palette";

const NODE_TYPES = { kionga: NodeView, frame: GroupFrame };
export const KIND_MIME = "application/x-kionga-kind";

export function FlowCanvas({ pinned }: { pinned: PinnedIssues }) {
  const flow = useReactFlow<CanvasNode, CanvasEdge>();
  const paneRef = useRef<HTMLDivElement>(null);
  const s = useEditor((x) => x);
  const { nodes, edges, canEdit, runView } = s;

  /** Add at the centre of the view (a click or Enter in the palette), where nothing is. */
  const addInView = useCallback((kind: string) => {
    const rect = paneRef.current?.getBoundingClientRect();
    const center = rect ? { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 } : { x: 400, y: 300 };
    const c = flow.screenToFlowPosition(center);
    s.addNode(kind, freeSpot(nodes, { x: c.x - 90, y: c.y - 40 }));
  }, [flow, nodes, s]);

  const onDrop = (e: React.DragEvent) => {
    const kind = e.dataTransfer.getData(KIND_MIME);
    if (!kind) return;
    e.preventDefault();
    const p = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
    s.addNode(kind, { x: p.x - 90, y: p.y - 30 });
  };

  const frames = useMemo(() => groupFrames(nodes), [nodes]);
  const shownNodes = useMemo(() => (frames.length ? [...frames, ...nodes] : nodes), [frames, nodes]);
  const shownEdges = useMemo(() => decorateEdges(edges, pinned, runView?.nodes ?? new Map(), runView?.status === "running"),
    [edges, pinned, runView]);

  return (
    <>
      <Palette components={s.registry.components} onAdd={addInView} mime={KIND_MIME} disabled={!canEdit} />
      <main className="canvas" ref={paneRef} aria-label="Graph canvas"
            onDragOver={(e) => { if (e.dataTransfer.types.includes(KIND_MIME)) { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; } }}
            onDrop={onDrop}>
        <ReactFlow<CanvasNode, CanvasEdge>
          nodes={shownNodes} edges={shownEdges} nodeTypes={NODE_TYPES}
          onNodesChange={s.onNodesChange} onEdgesChange={s.onEdgesChange} onConnect={s.connect}
          onNodeDragStart={() => s.remember()}
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
    </>
  );
}
