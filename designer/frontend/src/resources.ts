// Resource pickers' lists: GET /projects/{id}/resources?kind= (platform resources) and
// GET /agent-versions?project_id= (flows). A route that answers 404 (not on this
// server yet) makes the picker a plain text input.
import { api, isMissingRoute } from "./api";
import type { Resource, ResourceKind } from "./types";

export type ResourceList = Resource[] | "unavailable";
export type ResourceLoader = (projectId: number, kind: ResourceKind) => Promise<ResourceList>;

const cache = new Map<string, Promise<ResourceList>>();

function asList(data: unknown, key: string): Resource[] {
  const raw = Array.isArray(data) ? data : (data as Record<string, unknown> | null)?.[key]
    ?? (data as Record<string, unknown> | null)?.results ?? [];
  return (Array.isArray(raw) ? raw : []).map((r: Record<string, unknown>) => ({
    id: String(r.id),
    kind: r.kind as string | undefined,
    name: (r.name as string | undefined) ?? (r.number !== undefined ? `Version ${r.number}` : undefined),
    description: (r.description as string | undefined) ?? (r.notes as string | undefined),
  }));
}

export const loadResources: ResourceLoader = (projectId, kind) => {
  const path = kind === "version"
    ? `/agent-versions?project_id=${projectId}`
    : `/projects/${projectId}/resources?kind=${kind}`;
  let found = cache.get(path);
  if (!found) {
    found = api<unknown>("GET", path).then(
      (data) => asList(data, kind === "version" ? "versions" : "resources"),
      (e) => {
        if (isMissingRoute(e)) return "unavailable" as const;
        cache.delete(path);
        throw e;
      },
    );
    cache.set(path, found);
  }
  return found;
};
