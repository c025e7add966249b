import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent } from "@testing-library/react";
import { AUTOSAVE_MS, VALIDATE_DEBOUNCE_MS, useAutosave, useShortcuts, useValidation } from "./editorEffects";
import { renderWith, serve, store, twoNodes } from "../test/editor";

afterEach(() => { cleanup(); vi.unstubAllGlobals(); vi.useRealTimers(); });

function Shortcuts() { useShortcuts(); return <input aria-label="field" />; }
function Validation() { useValidation(); return null; }
function Autosave() { useAutosave(); return null; }

describe("editor effects", () => {
  it("keyboard: Ctrl+Z undoes, Ctrl+Shift+Z redoes, Ctrl+A selects all; not while typing", () => {
    const s = store();
    const view = renderWith(s, <Shortcuts />);
    s.getState().addNode("input", { x: 0, y: 0 });
    fireEvent.keyDown(view.getByLabelText("field"), { key: "z", ctrlKey: true });
    expect(s.getState().nodes).toHaveLength(3);
    fireEvent.keyDown(window, { key: "z", ctrlKey: true });
    expect(s.getState().nodes).toHaveLength(2);
    fireEvent.keyDown(window, { key: "Z", ctrlKey: true, shiftKey: true });
    expect(s.getState().nodes).toHaveLength(3);
    fireEvent.keyDown(window, { key: "a", ctrlKey: true });
    expect(s.getState().nodes.every((n) => n.selected)).toBe(true);
  });

  it("validates the document once it stops changing, and shows the report", async () => {
    vi.useFakeTimers();
    const report = { runnable: true, issues: [], content_sha256: "c".repeat(64), graph: null };
    const calls = serve({ "POST /api/v1/agent-designs/d1/validate": [200, report] });
    const s = store();
    renderWith(s, <Validation />);
    expect(s.getState().validating).toBe(true);
    act(() => s.getState().setName("Renamed"));
    await act(async () => { await vi.advanceTimersByTimeAsync(VALIDATE_DEBOUNCE_MS + 10); });
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toMatchObject({ name: "Renamed" });
    expect(s.getState().report?.report.content_sha256).toBe("c".repeat(64));
    expect(s.getState().validating).toBe(false);
  });

  it("autosave saves a dirty canvas after a pause, only when switched on", async () => {
    vi.useFakeTimers();
    const calls = serve({ "PUT /api/v1/agent-designs/d1": [200, { ...twoNodes(), revision: 4 }] });
    const s = store();
    renderWith(s, <Autosave />);
    act(() => s.getState().setName("Renamed"));
    await act(async () => { await vi.advanceTimersByTimeAsync(AUTOSAVE_MS + 10); });
    expect(calls).toHaveLength(0);
    act(() => s.getState().setAutosave(true));
    await act(async () => { await vi.advanceTimersByTimeAsync(AUTOSAVE_MS + 10); });
    expect(calls.map((c) => c.method)).toEqual(["PUT"]);
    expect(s.getState().design.revision).toBe(4);
  });
});
