import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { CanarySection } from "./CanarySection";
import { AnswerView, useAnswer } from "./lifecycleAnswer";
import type { Version } from "./VersionList";
import { serve } from "../test/serve";


const VERSIONS = [{ id: "v1", number: 1 }, { id: "v2", number: 2 }] as Version[];
const settings = { autoscaling: { min: 2, max: 4 }, resources: { cpu: "500m" }, replicas: 9 };
const agent = { id: "a1", name: "support", version: 1, version_id: "v1", canary: null, settings };
const operations = { agent, versions: [] };

function Section({ onVersions }: { onVersions: () => Promise<unknown> }) {
  const { answer, busy, act } = useAnswer();
  return (<>
    <CanarySection agentId="a1" versions={VERSIONS} canEdit={true} busy={busy} act={act}
                   onVersions={onVersions} />
    {answer && <AnswerView answer={answer} />}
  </>);
}

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

describe("CanarySection", () => {
  it("starts a canary with the agent's pod settings kept, then reads versions and operations again", async () => {
    const calls = serve({
      "GET /api/v1/agents/a1/operations?hours=24": [200, operations],
      "POST /api/v1/agent-versions/v2/deploy": [200, {
        ...agent, canary: { version_id: "v2", version: 2, percent: 25 } }],
    });
    const onVersions = vi.fn(async () => undefined);
    render(<Section onVersions={onVersions} />);
    fireEvent.change(await screen.findByLabelText("Start a canary:"), { target: { value: "v2" } });
    fireEvent.change(screen.getByLabelText("at"), { target: { value: "25" } });
    fireEvent.click(screen.getByRole("button", { name: "Start canary" }));
    const answer = await screen.findByTestId("lifecycle-answer");
    expect(answer.textContent).toContain("Canary v2 serves 25 % of agent support's turns; v1 serves the rest.");
    const deploy = calls.find((c) => c.method === "POST");
    // The pod's size goes again (the deploy body's defaults would resize it); nothing else.
    expect(deploy?.body).toEqual({ autoscaling: settings.autoscaling, resources: settings.resources,
                                   canary_percent: 25 });
    expect(onVersions).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(calls.filter((c) => c.url.endsWith("operations?hours=24"))).toHaveLength(2));
  });

  it("shows nothing while the agent's operations cannot be read", async () => {
    const calls = serve({});
    const { container } = render(<Section onVersions={async () => undefined} />);
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(container.textContent).toBe("");
  });
});
