import { describe, expect, it, vi } from "vitest";
import { act, render, screen } from "@testing-library/react";
import registryJson from "../test/registry.json";
import { ConfigForm } from "./ConfigForm";
import { schemaFields } from "./ToolInputSchema";
import { toResources } from "../resources";
import type { Registry } from "../types";
import type { ResourceLoader } from "../resources";

const registry = registryJson as unknown as Registry;
const tool = registry.components.find((c) => c.kind === "tool")!;

// GET /projects/{id}/resources?kind=function as the gateway answers it with an MCP
// server's tools listed (kionga/projects/resources.py mcp_function_dicts).
const FUNCTIONS = { resources: [
  { id: "word_count", kind: "function", name: "word_count", description: "Count words.",
    created_at: null, url: null, secret_set: false, builtin: true },
  { id: "mcp:tickets/open", kind: "function", name: "Tickets: open", description: "Open a ticket.",
    created_at: null, url: null, secret_set: false, builtin: false, mcp_server: "tickets",
    input_schema: { type: "object", required: ["title"],
                    properties: { title: { type: "string", description: "One line." },
                                  priority: { type: ["integer", "null"] } } } },
] };

function renderTool(value: string) {
  const loader: ResourceLoader = async () => toResources(FUNCTIONS);
  return render(
    <ConfigForm component={tool} nodeId="n1" name="" group="" config={{ tool: value }}
                operators={registry.condition_operators} projectId={1} loadResources={loader}
                onConfig={vi.fn()} onName={vi.fn()} onGroup={vi.fn()} />,
  );
}

describe("MCP tools in the tool node's inspector", () => {
  it("reads a tool's schema into fields", () => {
    expect(schemaFields(toResources(FUNCTIONS)[1].inputSchema)).toEqual([
      { name: "title", type: "string", required: true, description: "One line." },
      { name: "priority", type: "integer | null", required: false, description: undefined },
    ]);
    expect(schemaFields(undefined)).toEqual([]);
    expect(toResources(FUNCTIONS)[0].inputSchema).toBeUndefined();
  });

  it("offers the server's tools and shows the chosen one's input", async () => {
    renderTool("mcp:tickets/open");
    await act(async () => {});
    const picker = screen.getByLabelText(/^Tool/) as HTMLSelectElement;
    expect([...picker.options].map((o) => o.value)).toContain("mcp:tickets/open");
    expect(picker.value).toBe("mcp:tickets/open");
    const shown = screen.getByTestId("tool-input-schema").textContent!;
    expect(shown).toContain("title (string, required) — One line.");
    expect(shown).toContain("priority (integer | null)");
  });

  it("shows no schema for a function that has none", async () => {
    renderTool("word_count");
    await act(async () => {});
    expect(screen.queryByTestId("tool-input-schema")).toBeNull();
  });
});
