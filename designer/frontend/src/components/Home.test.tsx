import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { Home } from "./Home";
import { serve } from "../test/editor";

const SITE = { home: "/", sign_out: "/sign-out", links: [] };
const PROJECTS = [{ id: 1, slug: "acme", name: "Acme", role: "editor" }];

function home() {
  const calls = serve({
    "GET /api/v1/agent-designs": [200, { designs: [] }],
    "GET /api/v1/agent-designs/templates": [200, { templates: [] }],
    "POST /api/v1/agent-designs": [201, { id: "d1" }],
  });
  const designUrl = vi.fn((id: string) => `#/designs/${id}`);
  render(<Home projects={PROJECTS} designUrl={designUrl} username="alice" site={SITE} />);
  return { calls, designUrl };
}

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

describe("Home (new design)", () => {
  it("creates a design that requires a passing evaluation to publish when asked", async () => {
    const { calls, designUrl } = home();
    const gate = screen.getByRole("checkbox", { name: "Require a passing evaluation to publish" });
    expect((gate as HTMLInputElement).checked).toBe(false);
    fireEvent.click(gate);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "Refunds" } });
    fireEvent.click(screen.getByRole("button", { name: "Create and open" }));
    await waitFor(() => expect(designUrl).toHaveBeenCalledWith("d1"));
    const body = calls.find((c) => c.method === "POST")!.body as Record<string, unknown>;
    expect(body).toMatchObject({ project_id: 1, name: "Refunds", require_evaluation: true });
  });

  it("leaves the gate off by default", async () => {
    const { calls, designUrl } = home();
    fireEvent.click(screen.getByRole("button", { name: "Create and open" }));
    await waitFor(() => expect(designUrl).toHaveBeenCalledWith("d1"));
    const body = calls.find((c) => c.method === "POST")!.body as Record<string, unknown>;
    expect(body.require_evaluation).toBe(false);
  });
});
