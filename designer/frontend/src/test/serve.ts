// The API as components call it, for their tests: fetch stubbed to answer by route.
import { vi } from "vitest";

export interface Call { method: string; url: string; body: unknown }

/** The API answering by "METHOD path" (unknown routes 404); every call recorded. */
export function serve(routes: Record<string, [number, unknown]>): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal("fetch", vi.fn(async (url: string, init: RequestInit) => {
    const method = init.method ?? "GET";
    calls.push({ method, url, body: init.body ? JSON.parse(String(init.body)) : undefined });
    const [status, body] = routes[`${method} ${url}`] ?? [404, null];
    return new Response(body === null ? "" : JSON.stringify(body), { status });
  }));
  return calls;
}
