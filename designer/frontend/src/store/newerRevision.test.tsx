import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup } from "@testing-library/react";
import { useNewerRevisions } from "../components/editorEffects";
import { renderWith, serve, store, twoNodes } from "../test/editor";

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

const url = "/api/v1/agent-designs/d1";
const bobs = () => {
  const d = twoNodes();
  d.revision = 4;
  d.revisions = [{ number: 4, author: "bob" }, { number: 3, author: "alice" }];
  d.graph.nodes.push({ id: "prompt", kind: "prompt", x: 0, y: 200 });
  return d;
};

/** The browser's EventSource, driven by the test. */
class FakeEventSource {
  static opened: FakeEventSource[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((m: MessageEvent<string>) => void) | null = null;
  closed = false;
  constructor(public url: string) { FakeEventSource.opened.push(this); }
  close() { this.closed = true; }
  emit(data: unknown) { this.onmessage?.(new MessageEvent("message", { data: JSON.stringify(data) })); }
}

function Follower() { useNewerRevisions(); return null; }

describe("a newer revision saved by someone else", () => {
  it("warns, and saving opens the conflict instead of overwriting it", async () => {
    const s = store();
    s.getState().rename("output", "answer");
    const calls = serve({ [`GET ${url}`]: [200, bobs()] });
    await s.getState().checkNewer();
    expect(s.getState().newer?.by).toBe("bob");
    expect(s.getState().notice).toMatchObject({ kind: "error" });
    expect(s.getState().notice?.text).toContain("bob saved revision 4");
    expect(await s.getState().save()).toBe(false);
    expect(calls.filter((c) => c.method === "PUT")).toHaveLength(0);
    expect(s.getState().conflict?.current.revision).toBe(4);
    expect(s.getState().conflict?.theirs).toContain("added node prompt (prompt)");
    expect(s.getState().conflict?.mine).toContain("added node answer (output)");
    s.getState().reloadTheirs();
    expect(s.getState().newer).toBeNull();
  });

  it("the notice of its own save in flight is no warning", async () => {
    const s = store();
    s.getState().rename("output", "answer");
    serve({ [`GET ${url}`]: [200, bobs()] });
    s.setState({ saving: true });
    await s.getState().checkNewer();
    expect(s.getState().newer).toBeNull();
  });

  it("the revision the canvas holds is no warning", async () => {
    const s = store();
    serve({ [`GET ${url}`]: [200, twoNodes()] });
    await s.getState().checkNewer();
    expect(s.getState().newer).toBeNull();
    expect(s.getState().notice).toBeNull();
  });

  it("follows the project's notices: this design's revision.saved, and a reconnect", async () => {
    FakeEventSource.opened = [];
    vi.stubGlobal("EventSource", FakeEventSource);
    const calls = serve({ [`GET ${url}`]: [200, bobs()] });
    const s = store();
    const view = renderWith(s, <Follower />);
    const [source] = FakeEventSource.opened;
    expect(source.url).toBe("/api/v1/projects/1/notices");
    act(() => source.onopen?.());
    await act(async () => { source.emit({ kind: "revision.saved", design_id: "d2", revision: 9 }); });
    await act(async () => { source.emit({ kind: "run.ended", design_id: "d1", run_id: "r" }); });
    expect(calls).toHaveLength(0);
    await act(async () => { source.emit({ kind: "revision.saved", design_id: "d1", revision: 4 }); });
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([`GET ${url}`]);
    expect(s.getState().newer?.current.revision).toBe(4);
    await act(async () => { source.onopen?.(); });  // reconnected: notices may be lost
    expect(calls).toHaveLength(2);
    view.unmount();
    expect(source.closed).toBe(true);
  });
});
