import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { CanaryPanel, parsePercent, type CanaryAgent, type VersionTotals } from "./CanaryPanel";

afterEach(() => cleanup());

const VERSIONS = [{ id: "v1", number: 1 }, { id: "v2", number: 2 }, { id: "v3", number: 3 }];
const AGENT: CanaryAgent = { id: "a1", name: "support", version: 1, version_id: "v1", canary: null };
const totals = (role: "current" | "canary", version: number, percent: number | null,
                requests: number, errors: number, p50: number, p95: number): VersionTotals => ({
  role, version_id: `v${version}`, version, percent, requests, errors,
  success_rate: requests ? (requests - errors) / requests : null,
  latency_ms: { p50, p95 }, tokens: requests * 10, cost: requests / 1000 });

function Panel(props: { agent: CanaryAgent; totals?: VersionTotals[]; canEdit?: boolean;
                        onStart?: (v: string, p: number) => void; onPromote?: () => void;
                        onRollback?: () => void }) {
  const [percent, setPercent] = useState("10");
  const [choice, setChoice] = useState("");
  return <CanaryPanel agent={props.agent} versions={VERSIONS} totals={props.totals ?? null}
                      percent={percent} onPercent={setPercent} choice={choice} onChoice={setChoice}
                      canEdit={props.canEdit ?? true} onStart={props.onStart ?? vi.fn()}
                      onPromote={props.onPromote ?? vi.fn()} onRollback={props.onRollback ?? vi.fn()} />;
}

describe("parsePercent", () => {
  it("takes a whole number from 1 to 99 and nothing else", () => {
    expect(["1", " 42 ", "99"].map(parsePercent)).toEqual([1, 42, 99]);
    expect(["0", "100", "5.5", "-3", "", "ten", "1e1"].map(parsePercent)).toEqual(
      [null, null, null, null, null, null, null]);
  });
});

describe("CanaryPanel", () => {
  it("starts a canary of another version at the typed share, and refuses a bad share", () => {
    const onStart = vi.fn();
    render(<Panel agent={AGENT} onStart={onStart} />);
    expect(screen.getByTestId("canary").textContent).toContain("runs v1; no canary.");
    const options = Array.from(screen.getByLabelText("Start a canary:").querySelectorAll("option"))
      .map((o) => o.textContent);
    expect(options).toEqual(["version…", "v2", "v3"]);  // not the version it runs
    const start = screen.getByRole("button", { name: "Start canary" }) as HTMLButtonElement;
    expect(start.disabled).toBe(true);  // no version chosen yet
    fireEvent.change(screen.getByLabelText("Start a canary:"), { target: { value: "v3" } });
    fireEvent.change(screen.getByLabelText("at"), { target: { value: "100" } });
    expect(start.disabled).toBe(true);
    expect(screen.getByRole("note").textContent).toContain("1 to 99 %");
    fireEvent.change(screen.getByLabelText("at"), { target: { value: "25" } });
    fireEvent.click(start);
    expect(onStart).toHaveBeenCalledWith("v3", 25);
    expect(screen.queryByRole("button", { name: /Promote/ })).toBeNull();
  });

  it("shows both versions side by side and offers promote and roll back during a canary", () => {
    const onPromote = vi.fn();
    const onRollback = vi.fn();
    const agent = { ...AGENT, canary: { version_id: "v2", version: 2, percent: 20 } };
    render(<Panel agent={agent} onPromote={onPromote} onRollback={onRollback}
                  totals={[totals("current", 1, null, 80, 2, 120, 300),
                           totals("canary", 2, 20, 20, 5, 90, 410)]} />);
    expect(screen.getByTestId("canary").textContent).toContain("canary v2 serves 20 % of the turns");
    const rows = screen.getByTestId("canary-totals").querySelectorAll("tbody tr");
    expect(Array.from(rows).map((r) => Array.from(r.querySelectorAll("td")).map((c) => c.textContent)))
      .toEqual([["current", "v1", "80", "2", "97.5 %", "120 ms", "300 ms", "800", "0.0800"],
                ["canary (20 %)", "v2", "20", "5", "75 %", "90 ms", "410 ms", "200", "0.0200"]]);
    fireEvent.click(screen.getByRole("button", { name: "Promote v2" }));
    fireEvent.click(screen.getByRole("button", { name: "Roll back the canary (keep v1)" }));
    expect(onPromote).toHaveBeenCalledTimes(1);
    expect(onRollback).toHaveBeenCalledTimes(1);
    expect(screen.getByLabelText("Change the canary:")).toBeTruthy();
  });

  it("offers no action to a viewer", () => {
    render(<Panel agent={{ ...AGENT, canary: { version_id: "v2", version: 2, percent: 5 } }}
                  canEdit={false} />);
    expect(screen.queryByRole("button")).toBeNull();
    expect(screen.queryByRole("combobox")).toBeNull();
  });
});
