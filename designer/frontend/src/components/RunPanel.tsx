// Run panel: start a run of the saved revision, follow its events live (SSE), cancel,
// and list past runs to replay from their stored events. A run starts and streams in
// one request (POST …/runs with Accept: text/event-stream); the events route (an
// EventSource) resumes a stream that dropped and a run opened after a reload.
import { useCallback, useEffect, useRef, useState } from "react";
import { api, ApiError, eventsUrl, streamPost } from "../api";
import { applyEvent, emptyRun, TERMINAL, type RunView } from "../runstate";
import { useEditor } from "../store/editor";
import type { Run, RunEvent } from "../types";
import { parseTurns } from "../turns";
import { PastRuns, RunOptions, RunStatus, type RunOptionsValue } from "./RunViews";
import { SaveAsCase } from "./TestCases";

const EVENT_TYPES = ["run.started", "node.started", "node.retrying", "node.completed",
  "node.skipped", "node.failed", "approval.requested", "approval.resolved",
  "run.completed", "run.failed", "run.cancelled"];

interface Props {
  designId: string;
  nodeIds: string[];
  dirty: boolean;
  canEdit: boolean;
  saveFirst: () => Promise<boolean>;
  onView: (view: RunView | null) => void;
}

function hashRunId(): string | null {
  const m = /(?:^#|&)run=([0-9a-f-]{36})/.exec(window.location.hash);
  return m ? m[1] : null;
}

function setHashRunId(id: string | null): void {
  const url = window.location.pathname + window.location.search + (id ? `#run=${id}` : "");
  window.history.replaceState(null, "", url);
}

export function RunPanel({ designId, nodeIds, dirty, canEdit, saveFirst, onView }: Props) {
  const [input, setInput] = useState("hello there");
  const [options, setOptions] = useState<RunOptionsValue>({ sessionId: "", historyText: "", stopAfter: "" });
  const [sideEffects, setSideEffects] = useState(false);
  const [run, setRun] = useState<Run | null>(null);
  const [view, setView] = useState<RunView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [past, setPast] = useState<Run[] | null>(null);
  const [replaying, setReplaying] = useState(false);
  const source = useRef<EventSource | null>(null);
  const starting = useRef<AbortController | null>(null);  // the one-request start's stream
  const viewRef = useRef<RunView | null>(null);
  const replayTimer = useRef<number | null>(null);

  const publish = useCallback((v: RunView | null) => {
    viewRef.current = v;
    setView(v);
    onView(v);
  }, [onView]);

  const loadPast = useCallback(() => {
    api<{ runs: Run[] }>("GET", `/agent-designs/${designId}/runs`).then(
      (d) => setPast(d.runs.slice(0, 20)), () => setPast([]));
  }, [designId]);

  const close = () => {
    source.current?.close();
    source.current = null;
    starting.current?.abort();
    starting.current = null;
  };

  const finish = useCallback((runId: string, status: string) => {
    close();
    api<Run>("GET", `/agent-designs/${designId}/runs/${runId}`).then((r) => setRun(r), () => undefined);
    // The list may still have the row's old status: the stream's terminal event is the truth.
    api<{ runs: Run[] }>("GET", `/agent-designs/${designId}/runs`).then(
      (d) => setPast(d.runs.slice(0, 20).map((r) => (r.id === runId ? { ...r, status } : r))),
      () => undefined);
  }, [designId]);

  /** Apply one streamed event; true for the run's terminal event. */
  const take = useCallback((runId: string, data: string): boolean => {
    const event = JSON.parse(data) as RunEvent;
    publish(applyEvent(viewRef.current ?? emptyRun(runId), event));
    if (!TERMINAL.has(event.type)) return false;
    finish(runId, event.type.slice(4));
    return true;
  }, [finish, publish]);

  const follow = useCallback((runId: string, after: number) => {
    close();
    const es = new EventSource(eventsUrl(designId, runId, after));
    source.current = es;
    const onEvent = (msg: MessageEvent) => { take(runId, msg.data); };
    for (const t of EVENT_TYPES) es.addEventListener(t, onEvent);
    es.addEventListener("delta", onEvent);
    // EventSource reconnects by itself with Last-Event-ID; nothing to do on error.
  }, [designId, take]);

  /** Open a run: its stored events first, then live from the last seq (a reload resumes). */
  const open = useCallback(async (runId: string, live: boolean) => {
    setError(null);
    const r = await api<Run>("GET", `/agent-designs/${designId}/runs/${runId}`);
    setRun(r);
    setInput(r.input);
    let v = emptyRun(r.id);
    for (const e of r.events ?? []) v = applyEvent(v, e);
    publish(v);
    if (live && !TERMINAL.has(r.events?.[r.events.length - 1]?.type ?? "")) {
      setHashRunId(runId);
      follow(runId, v.lastSeq);
    }
  }, [designId, follow, publish]);

  useEffect(() => {
    loadPast();
    const resume = hashRunId();
    if (resume) open(resume, true).catch(() => setHashRunId(null));
    return () => {
      close();
      if (replayTimer.current) window.clearTimeout(replayTimer.current);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [designId]);

  /** Start a run; `rerun`: again from a node of a past run, repeating its recorded outputs
   *  of the nodes before it (and its input). */
  const start = async (rerun?: { fromRun: string; fromNode: string }) => {
    setError(null);
    if (dirty && !(await saveFirst())) return;
    const body: Record<string, unknown> = rerun
      ? { from_run: rerun.fromRun, from_node: rerun.fromNode, allow_side_effects: sideEffects }
      : { input, allow_side_effects: sideEffects };
    const { sessionId, historyText, stopAfter } = options;
    if (sessionId.trim()) body.session_id = sessionId.trim();
    const earlier = parseTurns(historyText);
    if (earlier.error) { setError(`History: ${earlier.error}`); return; }
    if (earlier.turns.length) body.history = earlier.turns;
    if (stopAfter) body.stop_after = stopAfter;
    close();
    const stream = new AbortController();
    starting.current = stream;
    let runId: string | null = null;
    let ended = false;
    try {
      await streamPost(`/agent-designs/${designId}/runs`, body,
                       { "Idempotency-Key": crypto.randomUUID() }, (message) => {
        if (message.event === "run") {  // the first frame: the run, as the JSON start answers
          const r = JSON.parse(message.data) as Run;
          runId = r.id;
          setRun(r);
          publish(emptyRun(r.id));
          setHashRunId(r.id);
        } else if (runId) {
          ended = take(runId, message.data) || ended;
        }
      }, stream.signal);
    } catch (e) {
      if (stream.signal.aborted) return;  // closed here: the run ended, or another began
      if (runId === null) showStartError(e);
    }
    // The stream dropped before the run's end: resume on the events route from the
    // last event seen (the run goes on regardless).
    if (runId !== null && !ended && starting.current === stream) {
      follow(runId, viewRef.current?.lastSeq ?? -1);
    }
  };

  const showStartError = (e: unknown) => {
    if (e instanceof ApiError) {
      const issues = (e.details.issues as { message: string }[] | undefined) ?? [];
      setError(`${e.message}${issues.length ? " " + issues.map((i) => i.message).join(" ") : ""}`);
    } else setError(String(e));
  };

  const cancel = async () => {
    if (!run) return;
    try {
      await api("POST", `/agent-designs/${designId}/runs/${run.id}/cancel`);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    }
  };

  const replay = async (runId: string) => {
    close();
    setHashRunId(null);
    setReplaying(true);
    const r = await api<Run>("GET", `/agent-designs/${designId}/runs/${runId}`);
    setRun(r);
    const events = r.events ?? [];
    let v = emptyRun(r.id);
    publish(v);
    let i = 0;
    const step = () => {
      if (i >= events.length) { setReplaying(false); return; }
      v = applyEvent(v, events[i++]);
      publish(v);
      replayTimer.current = window.setTimeout(step, 120);
    };
    step();
  };

  // "Re-run from here" on a node (the Inspector): start it here, where runs stream.
  const rerun = useEditor((s) => s.rerun);
  const requestRerun = useEditor((s) => s.requestRerun);
  useEffect(() => {
    if (!rerun) return;
    requestRerun(null);
    void start(rerun);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [rerun]);

  const clear = () => { close(); setRun(null); setHashRunId(null); publish(null); };
  const active = run && view && (view.status === "starting" || view.status === "running");

  return (
    <section className="run-panel" aria-label="Run">
      <h2>Run</h2>
      <label htmlFor="run-input">Run input</label>
      <textarea id="run-input" rows={3} value={input} onChange={(e) => setInput(e.target.value)} />
      <RunOptions value={options} nodeIds={nodeIds} onChange={setOptions} />
      <label className="check">
        <input type="checkbox" checked={sideEffects} onChange={(e) => setSideEffects(e.target.checked)} />
        Allow side effects (tools, API calls)
      </label>
      <div className="row">
        <button type="button" className="primary" onClick={() => void start()} disabled={!canEdit || !!active}>
          {dirty ? "Save & run" : "Run"}
        </button>
        <button type="button" onClick={cancel} disabled={!active}>Cancel run</button>
        {run && !active && <button type="button" onClick={clear}>Clear</button>}
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {run && view && <RunStatus run={run} view={view} replaying={replaying} />}
      {run && view && !active && !replaying && canEdit && (
        // The stream's terminal event ends a run here (the stored row may lag behind it).
        <SaveAsCase key={run.id} designId={designId}
                    run={{ id: run.id, input: run.input, output: run.output ?? view.output }} />
      )}
      <h3>Past runs</h3>
      <PastRuns runs={past} onReplay={replay} />
    </section>
  );
}
