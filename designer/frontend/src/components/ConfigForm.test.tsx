import { describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import registryJson from "../test/registry.json";
import { ConfigForm, localProblem } from "./ConfigForm";
import type { Registry } from "../types";
import type { ResourceLoader } from "../resources";

const registry = registryJson as unknown as Registry;
const comp = (kind: string) => registry.components.find((c) => c.kind === kind)!;

function renderForm(kind: string, config: Record<string, string>, loader?: ResourceLoader,
                    issues?: Map<string, { severity: "error"; code: string; message: string }[]>) {
  const onConfig = vi.fn();
  const utils = render(
    <ConfigForm component={comp(kind)} nodeId="n1" name="" group="" config={config}
                operators={registry.condition_operators} projectId={1}
                loadResources={loader ?? (async () => "unavailable")} issues={issues}
                onConfig={onConfig} onName={vi.fn()} onGroup={vi.fn()} />,
  );
  return { ...utils, onConfig };
}

describe("ConfigForm", () => {
  it("marks required settings and shows ranges and defaults", () => {
    renderForm("knowledge", {});
    const label = screen.getByText("Knowledge base").closest("label")!;
    expect(label.querySelector(".required")).not.toBeNull();
    const limit = screen.getByLabelText("Limit") as HTMLInputElement;
    expect(limit.type).toBe("number");
    expect(limit.min).toBe("1");
    expect(limit.max).toBe("20");
    expect(limit.placeholder).toBe("4");
    expect(screen.getByText(/Range 1–20\. Default: 4\./)).toBeTruthy();
  });

  it("offers choices with the default and reports changes", () => {
    const { onConfig } = renderForm("memory", { strategy: "none" });
    const select = screen.getByLabelText("Strategy") as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual(["", "window", "none"]);
    expect(select.options[0].text).toBe("default (window)");
    fireEvent.change(select, { target: { value: "window" } });
    expect(onConfig).toHaveBeenCalledWith("strategy", "window");
  });

  it("flags out-of-range integers locally and server issues by setting", () => {
    renderForm("memory", { turns: "99" }, undefined,
               new Map([["strategy", [{ severity: "error" as const, code: "x", message: "Server says no." }]]]));
    expect(screen.getByText("At most 50.")).toBeTruthy();
    expect(screen.getByText("Server says no.")).toBeTruthy();
    expect(screen.getByLabelText("Turns").getAttribute("aria-invalid")).toBe("true");
  });

  it("explains the condition grammar", () => {
    renderForm("condition", { expression: "contains:refund" });
    expect(screen.getByText("Condition grammar")).toBeTruthy();
    for (const op of registry.condition_operators) expect(screen.getAllByText(new RegExp(`^${op.name}`)).length).toBeGreaterThan(0);
  });

  it("lists resources in a picker, and falls back to a text input when the route is missing", async () => {
    const loader: ResourceLoader = async (_p, kind) => kind === "knowledge_base"
      ? [{ id: "kb-1", name: "Handbook" }] : "unavailable";
    const { onConfig } = renderForm("knowledge", {}, loader);
    await act(async () => {});
    const picker = screen.getByLabelText(/Knowledge base/) as HTMLSelectElement;
    expect(picker.tagName).toBe("SELECT");
    expect([...picker.options].map((o) => o.text)).toContain("Handbook (kb-1)");
    fireEvent.change(picker, { target: { value: "kb-1" } });
    expect(onConfig).toHaveBeenCalledWith("knowledge_base", "kb-1");

    cleanup();
    renderForm("tool", {}, loader);
    await act(async () => {});
    const text = screen.getByLabelText(/^Tool/) as HTMLInputElement;
    expect(text.tagName).toBe("INPUT");
    expect(screen.getByTestId("picker-fallback").textContent).toMatch(/function ID/);
  });

  it("offers the platform model on model pickers", async () => {
    renderForm("model", { model: "llm" }, async () => [{ id: "m-1", name: "Support model" }]);
    await act(async () => {});
    const picker = screen.getByLabelText(/^Model/) as HTMLSelectElement;
    expect(picker.value).toBe("llm");
    expect([...picker.options].map((o) => o.value)).toEqual(["", "llm", "m-1"]);
  });

  it("renames the node on Enter and shows a refused ID's reason", () => {
    const onRename = vi.fn((id: string) => (id === "taken" ? "Another node is called taken." : null));
    render(<ConfigForm component={comp("condition")} nodeId="condition" name="" group="" config={{}}
                       operators={registry.condition_operators} projectId={1}
                       loadResources={async () => "unavailable"} onRename={onRename}
                       onConfig={vi.fn()} onName={vi.fn()} onGroup={vi.fn()} />);
    const id = screen.getByLabelText("ID") as HTMLInputElement;
    fireEvent.change(id, { target: { value: "taken" } });
    fireEvent.keyDown(id, { key: "Enter" });
    expect(screen.getByText("Another node is called taken.")).toBeTruthy();
    expect(id.getAttribute("aria-invalid")).toBe("true");
    fireEvent.change(id, { target: { value: "route" } });
    fireEvent.blur(id);
    expect(onRename).toHaveBeenLastCalledWith("route");
    expect(id.getAttribute("aria-invalid")).toBe("false");
  });

  it("checks values like the server", () => {
    const turns = comp("memory").settings.find((s) => s.name === "turns")!;
    expect(localProblem(turns, "0")).toBe("At least 1.");
    expect(localProblem(turns, "x")).toBe("A whole number.");
    expect(localProblem(turns, "")).toBeNull();
    const expr = comp("condition").settings[0];
    expect(localProblem(expr, "")).toBe("Required.");
  });
});
