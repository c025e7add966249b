// Where things go on the canvas: a free spot for a new node, the group frames drawn
// behind grouped nodes, and edges decorated with their issues and the run's path.
import type { NodeRun } from "./context";
import type { CanvasEdge, CanvasNode, PinnedIssues } from "./graph";

/** The first place near `want` (below, then above, then beside) where a new node does not
 * cover another one: a node added from the keyboard lands in view, and visible. */
export function freeSpot(nodes: CanvasNode[], want: { x: number; y: number }): { x: number; y: number } {
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

export function groupFrames(nodes: CanvasNode[]): CanvasNode[] {
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

/** Edges with their issue marker, and the path the run took (animated while it runs). */
export function decorateEdges(edges: CanvasEdge[], pinned: PinnedIssues, runStates: Map<string, NodeRun>,
                              running: boolean): CanvasEdge[] {
  return edges.map((e) => {
    const issues = pinned.edges.get(e.id);
    const state = runStates.get(e.source);
    const taken = state?.status === "completed" && (state.port ?? e.sourceHandle) === e.sourceHandle;
    const cls = [issues ? "edge-issue" : "", taken ? "edge-taken" : "", e.sourceHandle === "error" ? "edge-error" : ""].join(" ").trim();
    return cls || issues ? { ...e, className: cls, animated: taken && running,
                             ...(issues ? { label: "⚠", ariaLabel: issues.map((i) => i.message).join(" ") } : {}) } : e;
  });
}
