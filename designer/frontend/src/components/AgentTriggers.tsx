// A deployed agent's triggers, under Test & publish → Versions: its signed webhooks and
// cron schedules (GET/POST/PATCH/DELETE /agents/{id}/triggers). Viewers read them;
// editors add, enable, disable and delete. A webhook's signing secret is in the answer
// that made it only, so it is shown once, right then, with how to sign a delivery.
import { useCallback, useEffect, useState } from "react";
import { api, ApiError, isMissingRoute } from "../api";

export interface Trigger {
  id: string; kind: "webhook" | "schedule"; name: string; enabled: boolean;
  path?: string; cron?: string; timezone?: string; input?: string; secret?: string;
}

type Kind = Trigger["kind"];
interface Made { name: string; path: string; secret: string }

/** The browser's own zone first, then every zone it knows (a datalist's suggestions). */
function zones(): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const all = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return [own, ...all.filter((z) => z !== own)];
}

/** A refusal in words: each field the server named (`cron: The hour field '25' …`). */
function refusal(e: unknown): string[] {
  if (!(e instanceof ApiError)) return [String(e)];
  const fields = (e.details.fields ?? {}) as Record<string, string[]>;
  const named = Object.entries(fields).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
  return named.length ? named : [`${e.status} ${e.code}: ${e.message}`];
}

export function AgentTriggers({ agentId, agentName, canEdit }: {
  agentId: string; agentName: string; canEdit: boolean;
}) {
  const url = `/agents/${agentId}/triggers`;
  const [triggers, setTriggers] = useState<Trigger[] | "unavailable" | null>(null);
  const [kind, setKind] = useState<Kind>("webhook");
  const [name, setName] = useState("");
  const [cron, setCron] = useState("0 9 * * mon-fri");
  const [timezone, setTimezone] = useState(() => zones()[0]);
  const [input, setInput] = useState("");
  const [made, setMade] = useState<Made | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setTriggers((await api<{ triggers: Trigger[] }>("GET", url)).triggers);
    } catch (e) {
      if (isMissingRoute(e)) setTriggers("unavailable");
      else setProblems(refusal(e));
    }
  }, [url]);
  useEffect(() => { void load(); }, [load]);

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setProblems([]);
    try {
      await work();
      await load();
    } catch (e) {
      setProblems(refusal(e));
    } finally {
      setBusy(false);
    }
  };
  const create = () => act(async () => {
    const body = kind === "webhook" ? { kind, name } : { kind, name, cron, timezone, input };
    const answer = await api<Trigger>("POST", url, body);
    setMade(answer.secret ? { name: answer.name, path: answer.path ?? "", secret: answer.secret } : null);
    setName("");
  });
  const toggle = (t: Trigger) => act(async () => {
    await api<Trigger>("PATCH", `${url}/${t.id}`, { enabled: !t.enabled });
  });
  const remove = (t: Trigger) => act(async () => {
    await api<null>("DELETE", `${url}/${t.id}`);
  });

  if (triggers === "unavailable") return null;
  return (
    <div className="triggers small" data-testid="triggers" aria-label={`Triggers of ${agentName}`}>
      <h4>Triggers of {agentName}</h4>
      {triggers === null ? <p className="muted">loading…</p> : !triggers.length
        ? <p className="muted">No webhooks or schedules: only callers start its turns.</p> : (
          <ul>{triggers.map((t) => (
            <li key={t.id} data-testid="trigger">
              <strong>{t.name}</strong> {t.kind === "webhook"
                ? <>webhook <code>POST {t.path}</code></>
                : <>schedule <code>{t.cron}</code> in {t.timezone}</>}
              {t.enabled ? "" : " · disabled"}
              {canEdit && <>
                {" "}<button type="button" className="small" disabled={busy} onClick={() => toggle(t)}>
                  {t.enabled ? "Disable" : "Enable"} {t.name}
                </button>
                <button type="button" className="small" disabled={busy} onClick={() => remove(t)}>
                  Delete {t.name}
                </button>
              </>}
            </li>))}
          </ul>)}
      {made && (
        <div className="answer ok" role="status" data-testid="webhook-secret">
          <p>Webhook {made.name}: its signing secret, shown this once — keep it with the sender.</p>
          <p><code>{made.secret}</code></p>
          <p className="muted">POST {made.path} with the body, <code>Kionga-Delivery: &lt;your ID&gt;</code> and
            {" "}<code>Kionga-Signature: t=&lt;unix time&gt;,v1=&lt;hex HMAC-SHA256 of "t.body"&gt;</code>.</p>
        </div>
      )}
      {canEdit && (
        <form className="trigger-form" onSubmit={(e) => { e.preventDefault(); void create(); }}>
          <label htmlFor={`trigger-kind-${agentId}`}>Kind</label>
          <select id={`trigger-kind-${agentId}`} value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            <option value="webhook">Webhook</option>
            <option value="schedule">Schedule</option>
          </select>
          <label htmlFor={`trigger-name-${agentId}`}>Name</label>
          <input id={`trigger-name-${agentId}`} value={name} required maxLength={100}
                 onChange={(e) => setName(e.target.value)} />
          {kind === "schedule" && <>
            <label htmlFor={`trigger-cron-${agentId}`}>Cron (minute hour day month weekday)</label>
            <input id={`trigger-cron-${agentId}`} value={cron} onChange={(e) => setCron(e.target.value)} />
            <label htmlFor={`trigger-zone-${agentId}`}>Time zone</label>
            <input id={`trigger-zone-${agentId}`} value={timezone} list={`trigger-zones-${agentId}`}
                   onChange={(e) => setTimezone(e.target.value)} />
            <datalist id={`trigger-zones-${agentId}`}>{zones().map((z) => <option key={z} value={z} />)}</datalist>
            <label htmlFor={`trigger-input-${agentId}`}>Input of each turn</label>
            <input id={`trigger-input-${agentId}`} value={input} onChange={(e) => setInput(e.target.value)} />
          </>}
          <button type="submit" disabled={busy || !name.trim()}>Add {kind}</button>
        </form>
      )}
      {problems.length > 0 && (
        <div className="answer bad" role="alert">{problems.map((p, i) => <p key={i}>{p}</p>)}</div>
      )}
    </div>
  );
}
