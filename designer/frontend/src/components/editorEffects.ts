// The editor's effects on the world: debounced validation, autosave, the leave-page guard
// and the keyboard shortcuts. Each reads and drives the editor store.
import { useEffect, useRef } from "react";
import { useReactFlow } from "@xyflow/react";
import { api, ApiError, noticesUrl } from "../api";
import { docKeyOf, isDirty } from "../store/derived";
import { useEditor, useEditorStore } from "../store/editor";
import type { GraphDoc, Report } from "../types";

export const VALIDATE_DEBOUNCE_MS = 400;
export const AUTOSAVE_MS = 1500;

/** Validate the document shortly after it stops changing; only the latest answer counts. */
export function useValidation(): void {
  const docKey = useEditor(docKeyOf);
  const designId = useEditor((s) => s.design.id);
  const store = useEditorStore();
  const seqRef = useRef(0);
  useEffect(() => {
    const seq = ++seqRef.current;
    const { setValidating, setReport, say } = store.getState();
    setValidating(true);
    const sent = JSON.parse(docKey) as GraphDoc;
    const timer = window.setTimeout(() => {
      api<Report>("POST", `/agent-designs/${designId}/validate`, sent).then(
        (r) => { if (seq === seqRef.current) setReport({ report: r, doc: sent }, false); },
        (e) => {
          if (seq !== seqRef.current) return;
          setValidating(false);
          say(`Validation failed: ${e instanceof ApiError ? e.message : e}`, "error");
        },
      );
    }, VALIDATE_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [docKey, designId, store]);
}

/** The slow poll behind the notices: a missed notice is noticed this late at most. */
export const NEWER_POLL_MS = 60_000;

/** Follow the project's notices: a revision of this design saved elsewhere (or a
 * reconnect, or the slow poll) makes the store read the design again and warn. */
export function useNewerRevisions(): void {
  const projectId = useEditor((s) => s.design.project_id);
  const designId = useEditor((s) => s.design.id);
  const store = useEditorStore();
  useEffect(() => {
    const check = () => { void store.getState().checkNewer(); };
    const poll = window.setInterval(check, NEWER_POLL_MS);
    if (typeof EventSource === "undefined") return () => window.clearInterval(poll);
    const source = new EventSource(noticesUrl(projectId));
    let opened = false;
    source.onopen = () => { if (opened) check(); opened = true; };  // notices missed meanwhile
    source.onmessage = (message: MessageEvent<string>) => {
      let notice: { kind?: unknown; design_id?: unknown };
      try { notice = JSON.parse(message.data) as typeof notice; } catch { return; }
      if (notice.kind === "revision.saved" && notice.design_id === designId) check();
    };
    return () => { window.clearInterval(poll); source.close(); };
  }, [projectId, designId, store]);
}

/** With autosave on, save a dirty canvas once it has been still for AUTOSAVE_MS. */
export function useAutosave(): void {
  const autosave = useEditor((s) => s.autosave);
  const dirty = useEditor(isDirty);
  const blocked = useEditor((s) => !!s.conflict || s.saving);
  const docKey = useEditor(docKeyOf);
  const save = useEditor((s) => s.save);
  useEffect(() => {
    if (!autosave || !dirty || blocked) return;
    const t = window.setTimeout(() => { void save(); }, AUTOSAVE_MS);
    return () => window.clearTimeout(t);
  }, [autosave, dirty, blocked, docKey, save]);
}

/** The browser asks before leaving a page with unsaved changes. */
export function useUnloadGuard(): void {
  const dirty = useEditor(isDirty);
  useEffect(() => {
    const guard = (e: BeforeUnloadEvent) => {
      if (!dirty) return;
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", guard);
    return () => window.removeEventListener("beforeunload", guard);
  }, [dirty]);
}

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
}

/** Ctrl+S anywhere; the others only outside form fields (where the keys edit text). */
export function useShortcuts(): void {
  const store = useEditorStore();
  const flow = useReactFlow();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const s = store.getState();
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      if (mod && key === "s") { e.preventDefault(); void s.save(); return; }
      if (isTyping(e.target)) return;
      if (mod && key === "z" && !e.shiftKey) { e.preventDefault(); s.undo(); }
      else if (mod && (key === "y" || (key === "z" && e.shiftKey))) { e.preventDefault(); s.redo(); }
      else if (mod && key === "c") { s.copy(); }
      else if (mod && key === "v") { e.preventDefault(); s.paste(); }
      else if (mod && key === "a") { e.preventDefault(); s.selectAll(); }
      else if (!mod && key === "f") { void flow.fitView({ duration: 200 }); }
      else if (!mod && key === "/") {
        e.preventDefault();
        document.getElementById("palette-search")?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [store, flow]);
}
