import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, screen } from "@testing-library/react";
import { TopBar } from "./TopBar";
import type { SiteConfig } from "./SiteNav";
import { renderWith, serve, store, twoNodes } from "../test/editor";

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

const site: SiteConfig = { home: "/", sign_out: "/logout", links: [] };
const button = (name: string) => screen.getByRole("button", { name }) as HTMLButtonElement;

describe("TopBar", () => {
  it("shows unsaved once the name changes, and enables Save", () => {
    const s = store();
    renderWith(s, <TopBar homeUrl="/" site={site} />);
    expect(screen.getByTestId("revision").textContent).toBe("rev 3");
    expect(button("Save").disabled).toBe(true);
    fireEvent.change(screen.getByLabelText("Design name"), { target: { value: "Other" } });
    expect(s.getState().name).toBe("Other");
    expect(screen.getByTestId("revision").textContent).toBe("rev 3 · unsaved");
    expect(button("Save").disabled).toBe(false);
  });

  it("Undo and Redo follow the store's history", () => {
    const s = store();
    renderWith(s, <TopBar homeUrl="/" site={site} />);
    expect(button("Undo").disabled).toBe(true);
    act(() => s.getState().addNode("input", { x: 0, y: 0 }));
    expect(button("Undo").disabled).toBe(false);
    fireEvent.click(button("Undo"));
    expect(s.getState().nodes).toHaveLength(2);
    expect(button("Redo").disabled).toBe(false);
    fireEvent.click(button("Redo"));
    expect(s.getState().nodes).toHaveLength(3);
  });

  it("Delete removes the selection; a viewer cannot edit or save", () => {
    const s = store();
    renderWith(s, <TopBar homeUrl="/" site={site} />);
    expect(button("Delete").disabled).toBe(true);
    act(() => s.getState().selectOnly("output"));
    fireEvent.click(button("Delete"));
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input"]);
    cleanup();
    renderWith(store(twoNodes(), false), <TopBar homeUrl="/" site={site} />);
    expect(button("Paste").disabled).toBe(true);
    expect((screen.getByLabelText("Design name") as HTMLInputElement).readOnly).toBe(true);
  });

  it("shows the validation verdict and the behaviour hash", () => {
    const s = store();
    renderWith(s, <TopBar homeUrl="/" site={site} />);
    act(() => s.getState().setReport({ report: { runnable: false, content_sha256: "b".repeat(64), graph: null,
      issues: [{ severity: "error", code: "x", message: "m" }] }, doc: twoNodes().graph }, false));
    expect(screen.getByTestId("runnable").textContent).toBe("✕ 1 error");
    expect(screen.getByTestId("hash").getAttribute("data-hash")).toBe("b".repeat(64));
  });

  it("Save sends the canvas", async () => {
    const s = store();
    s.getState().setName("Other");
    const calls = serve({ "PUT /api/v1/agent-designs/d1": [200, { ...twoNodes(), name: "Other", revision: 4 }] });
    renderWith(s, <TopBar homeUrl="/" site={site} />);
    fireEvent.click(button("Save"));
    expect(await screen.findByText("rev 4")).toBeTruthy();
    expect(calls.map((c) => c.method)).toEqual(["PUT"]);
  });
});
