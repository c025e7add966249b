// What the test & publish tab says after an action: one answer at a time, and a busy flag
// that disables every action while one is under way. Shared by its sections.
import { useCallback, useState } from "react";
import { ApiError, isMissingRoute } from "../api";

export interface Answer { title: string; ok: boolean; lines: string[] }

/** Runs an action: its lines (null: nothing to say) or its refusal become the answer. */
export type Act = (title: string, fn: () => Promise<string[] | null>) => Promise<void>;

export function explain(title: string, e: unknown): Answer {
  if (isMissingRoute(e)) return { title, ok: false, lines: ["Not available on this server yet."] };
  if (e instanceof ApiError) {
    const details = Object.entries(e.details).map(([k, v]) => {
      const text = typeof v === "string" ? v : JSON.stringify(v);
      return `${k}: ${/^[0-9a-f]{64}$/.test(text) ? text.slice(0, 12) + "…" : text}`;
    });
    const hint = e.code === "quality_gate"
      ? ["Evaluate this revision (all cases); once it passes, publish with it."] : [];
    return { title: e.code === "quality_gate" ? `${title}: refused by the quality gate` : title,
             ok: false, lines: [`${e.status} ${e.code}: ${e.message}`, ...details, ...hint] };
  }
  return { title, ok: false, lines: [String(e)] };
}

export function useAnswer(): { answer: Answer | null; setAnswer: (a: Answer | null) => void;
                               busy: boolean; act: Act } {
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [busy, setBusy] = useState(false);
  const act = useCallback<Act>(async (title, fn) => {
    setBusy(true);
    try {
      const lines = await fn();
      setAnswer(lines ? { title, ok: true, lines } : null);
    } catch (e) {
      setAnswer(explain(title, e));
    } finally {
      setBusy(false);
    }
  }, []);
  return { answer, setAnswer, busy, act };
}

export function AnswerView({ answer }: { answer: Answer }) {
  return (
    <div className={"answer " + (answer.ok ? "ok" : "bad")} role={answer.ok ? "status" : "alert"}
         data-testid="lifecycle-answer">
      <h4>{answer.title}</h4>
      {answer.lines.map((l, i) => <p key={i}>{l}</p>)}
    </div>
  );
}
