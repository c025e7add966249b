import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen } from "@testing-library/react";
import { FlowCanvas, KIND_MIME } from "./FlowCanvas";
import { CanvasContext } from "../context";
import { pinIssues } from "../graph";
import { registry, renderWith, store } from "../test/editor";
import type { EditorStore } from "../store/editor";

// jsdom has no layout: React Flow needs ResizeObserver to exist.
beforeAll(() => {
  vi.stubGlobal("ResizeObserver", class { observe() {} unobserve() {} disconnect() {} });
});
afterEach(() => cleanup());

const pinned = pinIssues([], { schema_version: 2, nodes: [], edges: [] });

function show(s: EditorStore) {
  const byKind = new Map(registry.components.map((c) => [c.kind, c]));
  return renderWith(s, (
    <CanvasContext.Provider value={{ registry, byKind, pinned, runStates: new Map() }}>
      <FlowCanvas pinned={pinned} />
    </CanvasContext.Provider>
  ));
}

describe("FlowCanvas", () => {
  it("a palette click adds the component to the store, selected", () => {
    const s = store();
    show(s);
    fireEvent.click(screen.getByRole("button", { name: "Add Prompt" }));
    const added = s.getState().nodes.find((n) => n.id === "prompt");
    expect(added?.selected).toBe(true);
    expect(s.getState().notice?.text).toBe("Added Prompt node prompt.");
  });

  it("a drop adds the dragged kind where it was dropped", () => {
    const s = store();
    show(s);
    const data = { getData: (t: string) => (t === KIND_MIME ? "output" : ""), types: [KIND_MIME] };
    fireEvent.drop(screen.getByRole("main", { name: "Graph canvas" }), { dataTransfer: data, clientX: 100, clientY: 100 });
    expect(s.getState().nodes.map((n) => n.id)).toContain("output-2");
  });

  it("a viewer's palette is disabled", () => {
    show(store(undefined, false));
    expect((screen.getByRole("button", { name: "Add Prompt" }) as HTMLButtonElement).disabled).toBe(true);
  });
});
