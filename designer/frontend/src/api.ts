// The public DRF API from the browser: session cookie, CSRF header on unsafe methods.
import type { EventSourceMessage } from "eventsource-parser";
import { EventSourceParserStream } from "eventsource-parser/stream";

export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function csrfToken(): string {
  const m = /(?:^|;\s*)csrftoken=([^;]+)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]) : "";
}

let base = "/api/v1";
export function setApiBase(value: string): void {
  base = value;
}

export async function api<T>(method: string, path: string, body?: unknown,
                             headers: Record<string, string> = {}): Promise<T> {
  const init: RequestInit = {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json", ...headers },
  };
  if (method !== "GET" && method !== "HEAD") {
    (init.headers as Record<string, string>)["X-CSRFToken"] = csrfToken();
  }
  if (body !== undefined) {
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(base + path, init);
  const data = await readJson(response);
  if (!response.ok) throw apiError(response, data);
  return data as T;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function apiError(response: Response, data: unknown): ApiError {
  const err = (data as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;
  return new ApiError(response.status, err?.code ?? "http_" + response.status,
                      err?.message ?? response.statusText, err?.details ?? {});
}

/**
 * POST with `Accept: text/event-stream`: for `…/runs`, the run starts and its events
 * follow in the same response (its first frame, `event: run`, is the run). Each frame
 * goes to onMessage as it arrives; resolves when the server ends the stream. An
 * answer that is not a stream (a refused start) throws ApiError, as api() does.
 */
export async function streamPost(path: string, body: unknown, headers: Record<string, string>,
                                 onMessage: (message: EventSourceMessage) => void,
                                 signal: AbortSignal): Promise<void> {
  const response = await fetch(base + path, {
    method: "POST",
    credentials: "same-origin",
    signal,
    headers: { Accept: "text/event-stream", "Content-Type": "application/json",
               "X-CSRFToken": csrfToken(), ...headers },
    body: JSON.stringify(body),
  });
  if (!response.ok || !response.body
      || !(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
    throw apiError(response, await readJson(response));
  }
  const reader = response.body.pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onMessage(value);
  }
}

/** A project's notices (Server-Sent Events): what changed, for the page to read again. */
export function noticesUrl(projectId: number): string {
  return `${base}/projects/${projectId}/notices`;
}

export function eventsUrl(designId: string, runId: string, after: number): string {
  return `${base}/agent-designs/${designId}/runs/${runId}/events` + (after >= 0 ? `?after=${after}` : "");
}

/** A route the server does not have yet answers 404 with no error body of ours. */
export function isMissingRoute(e: unknown): boolean {
  return e instanceof ApiError && e.status === 404;
}
