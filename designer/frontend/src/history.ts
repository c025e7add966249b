// Undo/redo over snapshots of the canvas (nodes, edges, settings).

export interface History<T> {
  past: T[];
  future: T[];
}

export const LIMIT = 100;

export function record<T>(h: History<T>, current: T): History<T> {
  return { past: [...h.past, current].slice(-LIMIT), future: [] };
}

export function undo<T>(h: History<T>, current: T): { history: History<T>; value: T } | null {
  if (!h.past.length) return null;
  const value = h.past[h.past.length - 1];
  return { history: { past: h.past.slice(0, -1), future: [current, ...h.future] }, value };
}

export function redo<T>(h: History<T>, current: T): { history: History<T>; value: T } | null {
  if (!h.future.length) return null;
  const value = h.future[0];
  return { history: { past: [...h.past, current], future: h.future.slice(1) }, value };
}
