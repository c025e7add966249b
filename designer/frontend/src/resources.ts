// Resource pickers' lists: GET /projects/{id}/resources?kind= (platform resources:
// `{resources: [{id, kind, name, description, ...}]}`, `id` being what graphs store) and
// GET /agent-versions?project_id= (flows: `{versions: [{id, design_id, number, notes, ...}]}`,
// named after their design from GET /agent-designs?project_id=). A route that answers
// 404 (not on this server) makes the picker a plain text input.
import { api, isMissingRoute } from "./api";
import type { Resource, ResourceKind, ToolInputSchema } from "./types";

export type ResourceList = Resource[] | "unavailable";
export type ResourceLoader = (projectId: number, kind: ResourceKind) => Promise<ResourceList>;

type Row = Record<string, unknown>;

function rows(data: unknown, key: string): Row[] {
  const raw = (data as Row | null)?.[key];
  return Array.isArray(raw) ? (raw as Row[]) : [];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function schema(value: unknown): ToolInputSchema | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as ToolInputSchema) : undefined;
}

/** The resources route's answer as picker entries (built-in functions flagged; an MCP
 * server's tools with their server and input schema). */
export function toResources(data: unknown): Resource[] {
  return rows(data, "resources").map((r) => {
    const mcpServer = text(r.mcp_server);
    const found: Resource = {
      id: String(r.id),
      kind: text(r.kind),
      name: text(r.name),
      description: [text(r.description), r.builtin === true ? "built in" : undefined,
                    mcpServer && `MCP server ${mcpServer}`]
        .filter(Boolean).join(" · ") || undefined,
    };
    if (mcpServer) {
      found.mcpServer = mcpServer;
      found.inputSchema = schema(r.input_schema) ?? {};
    }
    return found;
  });
}

/** Published versions as picker entries: "<design name> v<number>", newest first. */
export function toVersions(versions: unknown, designs: unknown): Resource[] {
  const names = new Map(rows(designs, "designs").map((d) => [String(d.id), text(d.name)]));
  return rows(versions, "versions").map((v) => {
    const design = names.get(String(v.design_id)) ?? "Design";
    const hash = text(v.content_sha256)?.slice(0, 8);
    return {
      id: String(v.id),
      kind: "version",
      name: `${design} v${String(v.number)}`,
      description: [text(v.notes), hash && `behaviour ${hash}`].filter(Boolean).join(" · ") || undefined,
    };
  });
}

const cache = new Map<string, Promise<ResourceList>>();

function fetchList(path: string): Promise<unknown> {
  return api<unknown>("GET", path);
}

export const loadResources: ResourceLoader = (projectId, kind) => {
  const key = `${projectId}:${kind}`;
  let found = cache.get(key);
  if (!found) {
    const load: Promise<Resource[]> = kind === "version"
      ? Promise.all([fetchList(`/agent-versions?project_id=${projectId}`),
                     fetchList(`/agent-designs?project_id=${projectId}`)])
          .then(([versions, designs]) => toVersions(versions, designs))
      : fetchList(`/projects/${projectId}/resources?kind=${kind}`).then(toResources);
    found = load.then((list): ResourceList => list, (e) => {
      if (isMissingRoute(e)) return "unavailable" as const;
      cache.delete(key);
      throw e;
    });
    cache.set(key, found);
  }
  return found;
};

/** Forget cached lists (after publishing, a flow picker should show the new version). */
export function forgetResources(): void {
  cache.clear();
}
