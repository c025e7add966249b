// A design's test cases: each with its input, history, tags, expected calls and judge
// criteria; an editor changes one (PUT …/fixtures/cases/{id}) or deletes it (DELETE).
// Every change answers the next fixtures revision; the list is read again after it.
import { useState } from "react";
import { api } from "../api";

export const CRITERIA = ["groundedness", "task_completion", "relevance", "safety"] as const;

export interface CaseJudge { criteria: string[]; reference?: string | null; min_score: number }
export interface TestCase {
  id?: string; name: string; input: string;
  history?: { role: string; content: string }[]; tags?: string[];
  expected?: { calls: string[]; judge?: CaseJudge | null };
  approvals?: unknown;
}

const words = (text: string) => text.split(",").map((w) => w.trim()).filter(Boolean);

/** The case a form's fields describe (the fields it does not show are kept). */
export function editedCase(c: TestCase, f: CaseForm): TestCase {
  const judge = f.criteria.length
    ? { criteria: f.criteria, reference: f.reference || null, min_score: f.minScore } : null;
  return { ...c, name: f.name, input: f.input, tags: words(f.tags),
           expected: { calls: words(f.calls), judge } };
}

export interface CaseForm {
  name: string; input: string; tags: string; calls: string;
  criteria: string[]; reference: string; minScore: number;
}

export function formOf(c: TestCase): CaseForm {
  const judge = c.expected?.judge;
  return { name: c.name, input: c.input, tags: (c.tags ?? []).join(", "),
           calls: (c.expected?.calls ?? []).join(", "), criteria: judge?.criteria ?? [],
           reference: judge?.reference ?? "", minScore: judge?.min_score ?? 0.7 };
}

interface Props {
  designId: string;
  cases: TestCase[];
  canEdit: boolean;
  /** After a change: read the cases again. */
  onChanged: () => Promise<unknown>;
  /** A refused change, as the API answered it. */
  onError: (title: string, e: unknown) => void;
}

export function TestCases({ designId, cases, canEdit, onChanged, onError }: Props) {
  const [editing, setEditing] = useState<string | null>(null);
  const [form, setForm] = useState<CaseForm | null>(null);
  const [busy, setBusy] = useState(false);
  const url = (id: string) => `/agent-designs/${designId}/fixtures/cases/${encodeURIComponent(id)}`;

  const change = async (title: string, fn: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await fn();
      setEditing(null);
      await onChanged();
    } catch (e) {
      onError(title, e);
    } finally {
      setBusy(false);
    }
  };
  const save = (c: TestCase) => form && change(`Test case ${c.name}`, () => {
    const { id: _id, ...body } = editedCase(c, form);
    return api("PUT", url(c.id!), body);
  });
  const remove = (c: TestCase) => change(`Test case ${c.name}`, () => api("DELETE", url(c.id!)));

  if (!cases.length) return null;
  return (
    <ul className="cases small" data-testid="case-list">
      {cases.map((c) => (
        <li key={c.id ?? c.name} data-testid="case" data-case-id={c.id}>
          {editing === c.id && form ? (
            <form className="case-edit" onSubmit={(e) => { e.preventDefault(); void save(c); }}>
              <label>Name <input value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} /></label>
              <label>Input <textarea rows={2} value={form.input} onChange={(e) => setForm({ ...form, input: e.target.value })} /></label>
              <label>Tags <input value={form.tags} placeholder="comma separated" onChange={(e) => setForm({ ...form, tags: e.target.value })} /></label>
              <label>Expected calls <input value={form.calls} placeholder="node IDs, comma separated" onChange={(e) => setForm({ ...form, calls: e.target.value })} /></label>
              <fieldset>
                <legend>Judge criteria</legend>
                {CRITERIA.map((k) => (
                  <label key={k} className="check">
                    <input type="checkbox" checked={form.criteria.includes(k)} onChange={(e) => setForm({
                      ...form, criteria: e.target.checked ? [...form.criteria, k] : form.criteria.filter((x) => x !== k) })} />
                    {" "}{k}
                  </label>
                ))}
              </fieldset>
              {form.criteria.length > 0 && <>
                <label>Expected answer <textarea rows={2} value={form.reference} onChange={(e) => setForm({ ...form, reference: e.target.value })} /></label>
                <label>Minimum score <input type="number" min={0} max={1} step={0.05} value={form.minScore}
                                            onChange={(e) => setForm({ ...form, minScore: Number(e.target.value) })} /></label>
              </>}
              <div className="row">
                <button type="submit" className="primary" disabled={busy}>Save case</button>
                <button type="button" onClick={() => setEditing(null)} disabled={busy}>Cancel</button>
              </div>
            </form>
          ) : (
            <div className="case">
              <strong>{c.name}</strong>{(c.tags ?? []).map((t) => <span key={t} className="tag"> #{t}</span>)}
              <div className="muted" data-testid="case-input">input: {c.input || "(empty)"}</div>
              {(c.history ?? []).length > 0 && <div className="muted">history: {c.history!.length} turn(s) — {c.history!.map((t) => `${t.role}: ${t.content}`).join(" · ")}</div>}
              {(c.expected?.calls ?? []).length > 0 && <div className="muted">expected calls: {c.expected!.calls.join(" → ")}</div>}
              {c.expected?.judge && <div className="muted">judge: {c.expected.judge.criteria.join(", ")} ≥ {c.expected.judge.min_score}{c.expected.judge.reference ? ` · expected answer: ${c.expected.judge.reference}` : ""}</div>}
              {canEdit && c.id && (
                <div className="row">
                  <button type="button" onClick={() => { setEditing(c.id!); setForm(formOf(c)); }} disabled={busy}>Edit</button>
                  <button type="button" onClick={() => void remove(c)} disabled={busy}>Delete</button>
                </div>
              )}
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

/** "Save as test case": a past run's input (and, when asked, its output as the expected
 * answer) added as a case of the design (POST …/fixtures/cases with from_run). */
export function SaveAsCase({ designId, run }: {
  designId: string; run: { id: string; input: string; output: string | null };
}) {
  const [name, setName] = useState(`Run ${run.id.slice(0, 8)}`);
  const [expectOutput, setExpectOutput] = useState(run.output !== null);
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      const d = await api<{ revision: number; case: TestCase }>(
        "POST", `/agent-designs/${designId}/fixtures/cases`,
        { name, from_run: run.id, expect_output: expectOutput });
      setSaid({ ok: true, text: `Saved as test case "${d.case.name}" (test cases revision ${d.revision}).` });
    } catch (e) {
      setSaid({ ok: false, text: e instanceof Error ? e.message : String(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="save-case small" data-testid="save-as-case"
          onSubmit={(e) => { e.preventDefault(); void save(); }}>
      <label>Case name <input value={name} onChange={(e) => setName(e.target.value)} /></label>
      <label className="check">
        <input type="checkbox" checked={expectOutput} disabled={run.output === null}
               onChange={(e) => setExpectOutput(e.target.checked)} />
        {" "}with its output as the expected answer
      </label>
      <button type="submit" disabled={busy || !name.trim()}>Save as test case</button>
      {said && <p className={said.ok ? "ok" : "error"} role={said.ok ? "status" : "alert"}>{said.text}</p>}
    </form>
  );
}
