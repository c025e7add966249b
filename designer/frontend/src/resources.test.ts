import { afterEach, describe, expect, it, vi } from "vitest";
import { forgetResources, loadResources, toResources, toVersions } from "./resources";

// Answers as the routes give them (kionga/projects/resources.py, designs/versions.py).
const MODELS = { resources: [
  { id: "fast", kind: "model", name: "Fast model", description: "cheap", created_at: "2025-01-01T00:00:00Z",
    base_url: "http://m.example/v1", model_name: "gpt-x", prices: { prompt_per_1k: 0, completion_per_1k: 0 },
    secret_set: true },
] };
const FUNCTIONS = { resources: [
  { id: "word_count", kind: "function", name: "word_count", description: "Count words.",
    created_at: null, url: null, secret_set: false, builtin: true },
] };
const VERSIONS = { versions: [
  { id: "0b6f3c1e-0000-4000-8000-000000000002", design_id: "d-1", project_id: 1, number: 2,
    content_sha256: "973c1df62866da6c", source_revision: 4, notes: "faster", author: "alice",
    created_at: "2025-01-01T00:00:00Z" },
] };
const DESIGNS = { designs: [{ id: "d-1", name: "Support agent", project_id: 1 }] };

afterEach(() => { vi.unstubAllGlobals(); forgetResources(); });

function serve(answers: Record<string, [number, unknown]>) {
  const asked: string[] = [];
  vi.stubGlobal("fetch", async (url: string) => {
    asked.push(url);
    const [status, body] = answers[url] ?? [404, { error: { code: "not_found", message: "No." } }];
    return new Response(JSON.stringify(body), { status });
  });
  return asked;
}

describe("resource lists", () => {
  it("names models by name and keeps the id graphs store", () => {
    expect(toResources(MODELS)).toEqual([{ id: "fast", kind: "model", name: "Fast model", description: "cheap" }]);
    expect(toResources(FUNCTIONS)[0]).toMatchObject({ id: "word_count", description: "Count words. · built in" });
    expect(toResources({})).toEqual([]);
  });

  it("names versions after their design", () => {
    expect(toVersions(VERSIONS, DESIGNS)).toEqual([{
      id: VERSIONS.versions[0].id, kind: "version", name: "Support agent v2",
      description: "faster · behaviour 973c1df6",
    }]);
  });

  it("loads each kind from its route, once, and says when a route is missing", async () => {
    const asked = serve({
      "/api/v1/projects/1/resources?kind=model": [200, MODELS],
      "/api/v1/agent-versions?project_id=1": [200, VERSIONS],
      "/api/v1/agent-designs?project_id=1": [200, DESIGNS],
    });
    expect(await loadResources(1, "model")).toHaveLength(1);
    expect(await loadResources(1, "model")).toHaveLength(1);
    expect((await loadResources(1, "version")) as unknown).toMatchObject([{ name: "Support agent v2" }]);
    expect(await loadResources(1, "dataset")).toBe("unavailable");
    expect(asked.filter((u) => u.endsWith("kind=model"))).toHaveLength(1);
  });
});
