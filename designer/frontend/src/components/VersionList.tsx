// The design's published versions, newest first, with where each is deployed.

export interface Version {
  id: string; number: number; content_sha256: string; created_at: string; notes?: string;
  author?: string | null; deployments?: { agent_name: string; current: boolean }[];
}

/** null: still loading; "unavailable": this server has no versions route. */
export function VersionList({ versions }: { versions: Version[] | "unavailable" | null }) {
  if (versions === "unavailable") return <p className="muted small">Not available on this server yet.</p>;
  if (versions === null) return <p className="muted small">loading…</p>;
  if (!versions.length) return <p className="muted small" data-testid="versions">No versions yet.</p>;
  return (
    <ol className="versions small" data-testid="versions">
      {versions.map((v) => (
        <li key={v.id}>
          <strong>v{v.number}</strong> <code>{v.content_sha256.slice(0, 12)}</code>
          {" · "}{new Date(v.created_at).toLocaleString()}{v.author ? ` · ${v.author}` : ""}
          {v.notes ? <div className="muted">{v.notes}</div> : null}
          {v.deployments?.length ? <div className="muted">deployed: {v.deployments.map((d) =>
            d.agent_name + (d.current ? " (current)" : "")).join(", ")}</div> : null}
        </li>
      ))}
    </ol>
  );
}
