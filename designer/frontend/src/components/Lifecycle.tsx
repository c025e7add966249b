// Fixtures, evaluation, publish and versions: each button calls its route and shows the
// answer; a route this server does not have (404) says so instead of failing.
import { useState } from "react";
import { api, ApiError, isMissingRoute } from "../api";
import type { Design } from "../types";

interface Props {
  design: Design;
  dirty: boolean;
  canEdit: boolean;
}

interface Answer {
  title: string;
  ok: boolean;
  lines: string[];
}

export function Lifecycle({ design, dirty, canEdit }: Props) {
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [busy, setBusy] = useState(false);
  const [notes, setNotes] = useState("");
  const base = `/agent-designs/${design.id}`;

  const call = async (title: string, fn: () => Promise<string[]>) => {
    setBusy(true);
    try {
      setAnswer({ title, ok: true, lines: await fn() });
    } catch (e) {
      if (isMissingRoute(e)) {
        setAnswer({ title, ok: false, lines: ["Not available on this server yet."] });
      } else if (e instanceof ApiError) {
        const details = Object.entries(e.details).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
        setAnswer({ title, ok: false, lines: [`${e.status} ${e.code}: ${e.message}`, ...details] });
      } else setAnswer({ title, ok: false, lines: [String(e)] });
    } finally {
      setBusy(false);
    }
  };

  const fixtures = () => call("Fixtures", async () => {
    const d = await api<{ revision: number; cases: { name: string; input: string }[] }>("GET", `${base}/fixtures`);
    return [`${d.cases.length} case(s), fixtures revision ${d.revision}.`, ...d.cases.slice(0, 8).map((c) => `• ${c.name}: ${c.input}`)];
  });
  const suggest = () => call("Suggested cases", async () => {
    const d = await api<{ suggestions?: { name: string; input: string }[]; cases?: { name: string; input: string }[] }>("POST", `${base}/fixtures/suggest`, {});
    const list = d.suggestions ?? d.cases ?? [];
    return [`${list.length} suggestion(s).`, ...list.slice(0, 8).map((c) => `• ${c.name}: ${c.input}`)];
  });
  const evaluate = () => call("Evaluation", async () => {
    const d = await api<{ id: string; status: string }>("POST", `${base}/evaluations`, { revision: design.revision });
    return [`Evaluation ${d.id.slice(0, 8)}: ${d.status}.`];
  });
  const publish = () => call("Publish", async () => {
    const d = await api<{ id?: string; number?: number; content_sha256?: string }>("POST", `${base}/publish`, { revision: design.revision, notes });
    return [`Version ${d.number ?? "?"} published (behaviour ${String(d.content_sha256 ?? "").slice(0, 12)}).`];
  });
  const versions = () => call("Versions", async () => {
    const d = await api<{ versions: { number: number; content_sha256: string; created_at: string; notes?: string }[] }>("GET", `${base}/versions`);
    if (!d.versions.length) return ["No versions yet."];
    return d.versions.map((v) => `v${v.number} · ${v.content_sha256.slice(0, 12)} · ${new Date(v.created_at).toLocaleString()}${v.notes ? ` · ${v.notes}` : ""}`);
  });

  return (
    <section className="lifecycle" aria-label="Publish">
      <h2>Test &amp; publish</h2>
      <p className="muted small">These act on the saved revision {design.revision}{dirty ? " — save first to include your changes" : ""}.</p>
      <div className="stack">
        <button type="button" onClick={fixtures} disabled={busy}>Fixtures</button>
        <button type="button" onClick={suggest} disabled={busy || !canEdit}>Suggest test cases</button>
        <button type="button" onClick={evaluate} disabled={busy || !canEdit}>Evaluate</button>
        <label htmlFor="publish-notes">Release notes</label>
        <input id="publish-notes" value={notes} onChange={(e) => setNotes(e.target.value)} />
        <button type="button" className="primary" onClick={publish} disabled={busy || !canEdit || dirty}>Publish revision {design.revision}</button>
        <button type="button" onClick={versions} disabled={busy}>Versions</button>
      </div>
      {answer && (
        <div className={"answer " + (answer.ok ? "ok" : "bad")} role="status" data-testid="lifecycle-answer">
          <h3>{answer.title}</h3>
          {answer.lines.map((l, i) => <p key={i}>{l}</p>)}
        </div>
      )}
    </section>
  );
}
