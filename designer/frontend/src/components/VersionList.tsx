// The design's published versions, newest first, with where each is deployed; the agent
// running a version offers "Roll back" when it ran an earlier one (POST agents/{id}/rollback).

export interface Deployment { agent_id?: string; agent_name: string; current: boolean; canary?: boolean }

export interface Version {
  id: string; number: number; content_sha256: string; created_at: string; notes?: string;
  author?: string | null; deployments?: Deployment[];
}

/** The agents running one of these versions that ran another of them before. */
function canRollBack(versions: Version[]): Set<string> {
  const ran = (current: boolean) => new Set(versions.flatMap((v) => (v.deployments ?? [])
    .filter((d) => d.current === current && !d.canary && d.agent_id).map((d) => d.agent_id as string)));
  const before = ran(false);
  return new Set([...ran(true)].filter((id) => before.has(id)));
}

/** null: still loading; "unavailable": this server has no versions route. `onRollback`
 * (editors): roll that agent back to the version it ran before. */
export function VersionList({ versions, onRollback, busy = false }: {
  versions: Version[] | "unavailable" | null;
  onRollback?: (agentId: string, agentName: string) => void; busy?: boolean;
}) {
  if (versions === "unavailable") return <p className="muted small">Not available on this server yet.</p>;
  if (versions === null) return <p className="muted small">loading…</p>;
  if (!versions.length) return <p className="muted small" data-testid="versions">No versions yet.</p>;
  const rollable = onRollback ? canRollBack(versions) : new Set<string>();
  return (
    <ol className="versions small" data-testid="versions">
      {versions.map((v) => (
        <li key={v.id}>
          <strong>v{v.number}</strong> <code>{v.content_sha256.slice(0, 12)}</code>
          {" · "}{new Date(v.created_at).toLocaleString()}{v.author ? ` · ${v.author}` : ""}
          {v.notes ? <div className="muted">{v.notes}</div> : null}
          {v.deployments?.length ? <div className="muted">deployed: {v.deployments.map((d) =>
            d.agent_name + (d.current ? " (current)" : d.canary ? " (canary)" : "")).join(", ")}
            {v.deployments.filter((d) => d.current && d.agent_id && rollable.has(d.agent_id)).map((d) => (
              <button key={d.agent_id} type="button" className="small" disabled={busy}
                      onClick={() => onRollback?.(d.agent_id as string, d.agent_name)}>
                Roll back {d.agent_name}
              </button>))}
          </div> : null}
        </li>
      ))}
    </ol>
  );
}
