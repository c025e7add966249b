import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { RevisionHistory } from "./RevisionHistory";
import { design, renderWith, serve, store, twoNodes } from "../test/editor";
import type { GraphDiff } from "../types";

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

const revisions = [{ number: 3, author: "alice", created_at: "2026-12-01T10:00:00Z" },
                   { number: 2, author: "bob", created_at: "2026-12-01T09:00:00Z" }];

const diff = (over: Partial<GraphDiff> = {}): GraphDiff => ({
  from: "2", to: "3", behaviour_changed: false, settings: [],
  nodes: { added: [], removed: [], changed: [{ id: "p", changes: [
    { field: "name", before: "Ask", after: "Ask nicely", cosmetic: true }] }] },
  edges: { added: [], removed: [] }, ...over,
});

describe("revision history", () => {
  it("compares a revision with the current one and says a cosmetic edit is one", async () => {
    serve({ "GET /api/v1/agent-designs/d1/diff?from=2&to=3": [200, diff()] });
    renderWith(store({ ...twoNodes(), revisions }), <RevisionHistory />);
    expect(screen.queryByRole("button", { name: "Compare revision 3 with the current one" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Compare revision 2 with the current one" }));
    const shown = await screen.findByTestId("revision-diff");
    expect(shown.textContent).toContain("same behaviour (a cosmetic edit)");
    expect(shown.textContent).toContain("name: Ask → Ask nicely (cosmetic)");
  });

  it("restores a revision as the next one and loads it into the editor", async () => {
    const restored = design({ nodes: [{ id: "input", kind: "input", x: 0, y: 0 }] },
                            { revision: 4, revisions });
    const calls = serve({
      "GET /api/v1/agent-designs/d1/diff?from=2&to=3": [200, diff({ behaviour_changed: true,
        nodes: { added: [], removed: [{ id: "output", kind: "output" }], changed: [] } })],
      "POST /api/v1/agent-designs/d1/revisions/2/restore": [200, restored],
    });
    const s = store({ ...twoNodes(), revisions });
    renderWith(s, <RevisionHistory />);
    fireEvent.click(screen.getByRole("button", { name: "Compare revision 2 with the current one" }));
    expect((await screen.findByTestId("revision-diff")).textContent).toContain("removed node output (output)");
    fireEvent.click(screen.getByRole("button", { name: "Restore revision 2" }));
    await waitFor(() => expect(s.getState().design.revision).toBe(4));
    expect(calls.at(-1)?.body).toEqual({ revision: 3 });
    expect(s.getState().nodes.map((n) => n.id)).toEqual(["input"]);
    expect(s.getState().notice?.text).toBe("Restored revision 2 as revision 4.");
  });

  it("offers no restore to a viewer", async () => {
    serve({ "GET /api/v1/agent-designs/d1/diff?from=2&to=3": [200, diff()] });
    renderWith(store({ ...twoNodes(), revisions }, false), <RevisionHistory />);
    fireEvent.click(screen.getByRole("button", { name: "Compare revision 2 with the current one" }));
    await screen.findByTestId("revision-diff");
    expect(screen.queryByRole("button", { name: "Restore revision 2" })).toBeNull();
  });
});
