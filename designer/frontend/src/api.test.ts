import { afterEach, describe, expect, it, vi } from "vitest";
import type { EventSourceMessage } from "eventsource-parser";
import { ApiError, streamPost } from "./api";

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

afterEach(() => vi.unstubAllGlobals());

describe("streamPost (start a run and follow it in one request)", () => {
  it("hands on each frame as it is complete, whatever the chunks' boundaries", async () => {
    const fetch = vi.fn(async () => new Response(streamOf([
      'event: run\ndata: {"id": "r1", "status": "queued"}\n\nevent: run.st',
      'arted\nid: 1700000000000-0\ndata: {"seq": 0, "type": "run.started"}\n\n: keep-alive\n\n',
      'event: run.completed\nid: 1700000000000-1\ndata: {"seq": 1, "type": "run.completed"}\n\n',
    ]), { status: 201, headers: { "Content-Type": "text/event-stream" } }));
    vi.stubGlobal("fetch", fetch);
    const got: EventSourceMessage[] = [];
    await streamPost("/agent-designs/d1/runs", { input: "hi" }, { "Idempotency-Key": "k1" },
                     (m) => got.push(m), new AbortController().signal);
    expect(got.map((m) => [m.event, JSON.parse(m.data).seq ?? JSON.parse(m.data).id])).toEqual([
      ["run", "r1"], ["run.started", 0], ["run.completed", 1]]);
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/v1/agent-designs/d1/runs");
    expect(init.method).toBe("POST");
    expect(init.headers).toMatchObject({ Accept: "text/event-stream", "Idempotency-Key": "k1" });
    expect(JSON.parse(String(init.body))).toEqual({ input: "hi" });
  });

  it("throws the API's error when the start is refused", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response(
      JSON.stringify({ error: { code: "runner_at_capacity", message: "full", details: {} } }),
      { status: 429, headers: { "Content-Type": "application/json" } })));
    const refused = streamPost("/agent-designs/d1/runs", {}, {}, () => undefined,
                               new AbortController().signal);
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ status: 429, code: "runner_at_capacity" });
  });
});
