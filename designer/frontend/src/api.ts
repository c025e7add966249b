// The public DRF API from the browser: session cookie, CSRF header on unsafe methods.

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
  const text = await response.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const err = (data as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null)?.error;
    throw new ApiError(response.status, err?.code ?? "http_" + response.status,
                       err?.message ?? response.statusText, err?.details ?? {});
  }
  return data as T;
}

export function eventsUrl(designId: string, runId: string, after: number): string {
  return `${base}/agent-designs/${designId}/runs/${runId}/events` + (after >= 0 ? `?after=${after}` : "");
}

/** A route the server does not have yet answers 404 with no error body of ours. */
export function isMissingRoute(e: unknown): boolean {
  return e instanceof ApiError && e.status === 404;
}
