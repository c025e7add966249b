// The deployed agent's canary: start one (another version serving a share of the turns,
// sticky per session), compare both versions' operations side by side, then promote it
// (POST agents/{id}/promote) or roll it back (POST agents/{id}/rollback: the agent keeps
// its version). Starting is a deploy of the version with canary_percent.

export const MIN_PERCENT = 1;
export const MAX_PERCENT = 99;

export interface Canary { version_id: string; version: number; percent: number }

export interface CanaryAgent {
  id: string; name: string; version: number; version_id: string; canary: Canary | null;
  settings?: Record<string, unknown>;
}

/** One version's totals over the window (GET agents/{id}/operations: `versions`). */
export interface VersionTotals {
  role: "current" | "canary"; version_id: string; version: number; percent: number | null;
  requests: number; errors: number; success_rate: number | null;
  latency_ms: { p50: number | null; p95: number | null }; tokens: number; cost: number;
}

export interface CanaryChoice { id: string; number: number }

/** The share as typed, or null when it is not a whole number from 1 to 99. */
export function parsePercent(text: string): number | null {
  if (!/^\d{1,2}$/.test(text.trim())) return null;
  const n = Number(text.trim());
  return n >= MIN_PERCENT && n <= MAX_PERCENT ? n : null;
}

const ms = (v: number | null) => (v === null ? "—" : `${Math.round(v)} ms`);
const rate = (v: number | null) => (v === null ? "—" : `${Math.round(v * 1000) / 10} %`);

export function CanaryPanel({ agent, versions, totals, percent, onPercent, choice, onChoice,
                              busy = false, canEdit, onStart, onPromote, onRollback }: {
  agent: CanaryAgent; versions: CanaryChoice[]; totals: VersionTotals[] | null;
  percent: string; onPercent: (text: string) => void;
  choice: string; onChoice: (versionId: string) => void;
  busy?: boolean; canEdit: boolean;
  onStart: (versionId: string, percent: number) => void; onPromote: () => void; onRollback: () => void;
}) {
  const others = versions.filter((v) => v.id !== agent.version_id);
  const share = parsePercent(percent);
  const chosen = others.find((v) => v.id === choice) ?? null;
  return (
    <div className="canary small" data-testid="canary">
      <p>
        Agent <strong>{agent.name}</strong> runs v{agent.version}
        {agent.canary
          ? <>; canary <strong>v{agent.canary.version}</strong> serves {agent.canary.percent} % of the turns.</>
          : "; no canary."}
      </p>
      {totals && totals.length > 0 && (
        <table className="canary-totals" data-testid="canary-totals">
          <thead><tr><th>Serves</th><th>Version</th><th>Turns</th><th>Errors</th><th>Success</th>
            <th>p50</th><th>p95</th><th>Tokens</th><th>Cost</th></tr></thead>
          <tbody>{totals.map((t) => (
            <tr key={t.version_id} data-role={t.role}>
              <td>{t.role}{t.percent !== null ? ` (${t.percent} %)` : ""}</td><td>v{t.version}</td>
              <td>{t.requests}</td><td>{t.errors}</td><td>{rate(t.success_rate)}</td>
              <td>{ms(t.latency_ms.p50)}</td><td>{ms(t.latency_ms.p95)}</td>
              <td>{t.tokens}</td><td>{t.cost.toFixed(4)}</td>
            </tr>))}
          </tbody>
        </table>
      )}
      {canEdit && agent.canary && (
        <p>
          <button type="button" className="primary" disabled={busy} onClick={onPromote}>
            Promote v{agent.canary.version}
          </button>{" "}
          <button type="button" disabled={busy} onClick={onRollback}>
            Roll back the canary (keep v{agent.version})
          </button>
        </p>
      )}
      {canEdit && others.length > 0 && (
        <p>
          <label htmlFor="canary-version">{agent.canary ? "Change the canary: " : "Start a canary: "}</label>
          <select id="canary-version" value={chosen?.id ?? ""} onChange={(e) => onChoice(e.target.value)}>
            <option value="">version…</option>
            {others.map((v) => <option key={v.id} value={v.id}>v{v.number}</option>)}
          </select>{" "}
          <label htmlFor="canary-percent">at</label>{" "}
          <input id="canary-percent" inputMode="numeric" size={3} value={percent}
                 aria-invalid={share === null} onChange={(e) => onPercent(e.target.value)} /> %{" "}
          <button type="button" disabled={busy || share === null || chosen === null}
                  onClick={() => chosen && share !== null && onStart(chosen.id, share)}>
            Start canary
          </button>
          {share === null && <span className="muted" role="note"> {MIN_PERCENT} to {MAX_PERCENT} %, a whole number.</span>}
        </p>
      )}
    </div>
  );
}
