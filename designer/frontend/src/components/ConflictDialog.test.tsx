import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, screen } from "@testing-library/react";
import { ConflictDialog, NoticeBar } from "./ConflictDialog";
import { renderWith, store, twoNodes } from "../test/editor";

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

function conflicted() {
  const s = store();
  const current = { ...twoNodes(), revision: 4 };
  current.graph.nodes.push({ id: "prompt", kind: "prompt" });
  s.setState({ conflict: { current, theirs: ["added node prompt (prompt)"], mine: [] } });
  return s;
}

describe("NoticeBar and ConflictDialog", () => {
  it("shows the last notice as an alert or a status, and dismisses it", () => {
    const s = store();
    renderWith(s, <NoticeBar />);
    expect(screen.queryByTestId("notice")).toBeNull();
    act(() => s.getState().say("Nope", "error"));
    expect(screen.getByRole("alert").textContent).toContain("Nope");
    fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("notice")).toBeNull();
  });

  it("lists both sides, and Reload theirs puts their revision on the canvas", () => {
    const s = conflicted();
    renderWith(s, <><NoticeBar /><ConflictDialog /></>);
    expect(screen.getByRole("alertdialog").textContent).toContain("Someone saved revision 4 meanwhile");
    expect(screen.getByText("added node prompt (prompt)")).toBeTruthy();
    expect(screen.getByText("none")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Reload theirs (drop mine)" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input", "output", "prompt"]);
    expect(s.getState().design.revision).toBe(4);
    expect(screen.getByTestId("notice").textContent).toContain("Reloaded revision 4");
  });
});
