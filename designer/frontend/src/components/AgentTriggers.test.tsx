import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { AgentTriggers, type Trigger } from "./AgentTriggers";
import { serve } from "../test/serve";


const url = "/api/v1/agents/a1/triggers";
const hook: Trigger = { id: "t1", kind: "webhook", name: "orders", enabled: true, path: "/api/v1/hooks/t1" };
const nightly: Trigger = { id: "t2", kind: "schedule", name: "nightly", enabled: false,
                           cron: "0 2 * * *", timezone: "Europe/Paris", input: "tidy" };

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

describe("AgentTriggers", () => {
  it("lists webhooks and schedules; a viewer gets no buttons", async () => {
    serve({ [`GET ${url}`]: [200, { triggers: [hook, nightly] }] });
    render(<AgentTriggers agentId="a1" agentName="support" canEdit={false} />);
    await waitFor(() => expect(screen.getAllByTestId("trigger")).toHaveLength(2));
    const [first, second] = screen.getAllByTestId("trigger").map((li) => li.textContent);
    expect(first).toContain("orders webhook POST /api/v1/hooks/t1");
    expect(second).toContain("nightly schedule 0 2 * * * in Europe/Paris · disabled");
    expect(screen.queryByRole("button")).toBeNull();
  });

  it("shows a new webhook's secret once and reads the list again", async () => {
    const calls = serve({
      [`GET ${url}`]: [200, { triggers: [] }],
      [`POST ${url}`]: [201, { ...hook, secret: "whsec_abc" }],
    });
    render(<AgentTriggers agentId="a1" agentName="support" canEdit={true} />);
    await screen.findByText("No webhooks or schedules: only callers start its turns.");
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "orders" } });
    fireEvent.click(screen.getByRole("button", { name: "Add webhook" }));
    await waitFor(() => expect(screen.getByTestId("webhook-secret").textContent).toContain("whsec_abc"));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ kind: "webhook", name: "orders" });
    expect(calls.filter((c) => c.method === "GET")).toHaveLength(2);
  });

  it("sends a schedule's cron, zone and input and shows the field the server refused", async () => {
    const calls = serve({
      [`GET ${url}`]: [200, { triggers: [] }],
      [`POST ${url}`]: [400, { error: { code: "invalid_request", message: "cron: bad",
        details: { fields: { cron: ["The hour field '25' is not valid: Invalid end range: 25 > 23."] } } } }],
    });
    render(<AgentTriggers agentId="a1" agentName="support" canEdit={true} />);
    await screen.findByText("No webhooks or schedules: only callers start its turns.");
    fireEvent.change(screen.getByLabelText("Kind"), { target: { value: "schedule" } });
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "nightly" } });
    fireEvent.change(screen.getByLabelText(/^Cron/), { target: { value: "0 25 * * *" } });
    fireEvent.change(screen.getByLabelText("Time zone"), { target: { value: "Asia/Tokyo" } });
    fireEvent.change(screen.getByLabelText("Input of each turn"), { target: { value: "go" } });
    fireEvent.click(screen.getByRole("button", { name: "Add schedule" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent)
      .toBe("cron: The hour field '25' is not valid: Invalid end range: 25 > 23."));
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({
      kind: "schedule", name: "nightly", cron: "0 25 * * *", timezone: "Asia/Tokyo", input: "go" });
    expect(screen.queryByTestId("webhook-secret")).toBeNull();
  });

  it("enables, disables and deletes with PATCH and DELETE", async () => {
    const calls = serve({
      [`GET ${url}`]: [200, { triggers: [hook, nightly] }],
      [`PATCH ${url}/t1`]: [200, { ...hook, enabled: false }],
      [`PATCH ${url}/t2`]: [200, { ...nightly, enabled: true }],
      [`DELETE ${url}/t1`]: [204, null],
    });
    render(<AgentTriggers agentId="a1" agentName="support" canEdit={true} />);
    fireEvent.click(await screen.findByRole("button", { name: "Disable orders" }));
    await waitFor(() => expect(calls.filter((c) => c.method === "PATCH")).toHaveLength(1));
    fireEvent.click(await screen.findByRole("button", { name: "Enable nightly" }));
    await waitFor(() => expect(calls.filter((c) => c.method === "PATCH")).toHaveLength(2));
    fireEvent.click(await screen.findByRole("button", { name: "Delete orders" }));
    await waitFor(() => expect(calls.some((c) => c.method === "DELETE")).toBe(true));
    expect(calls.filter((c) => c.method === "PATCH").map((c) => [c.url, c.body])).toEqual([
      [`${url}/t1`, { enabled: false }], [`${url}/t2`, { enabled: true }]]);
  });

  it("says nothing on a server without triggers", async () => {
    serve({});
    const { container } = render(<AgentTriggers agentId="a1" agentName="support" canEdit={true} />);
    await waitFor(() => expect(container.textContent).toBe(""));
  });
});
