import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { VersionList } from "./VersionList";

afterEach(() => cleanup());

describe("VersionList", () => {
  it("says when it is loading, unavailable or empty", () => {
    render(<VersionList versions={null} />);
    expect(screen.getByText("loading…")).toBeTruthy();
    cleanup();
    render(<VersionList versions="unavailable" />);
    expect(screen.getByText("Not available on this server yet.")).toBeTruthy();
    cleanup();
    render(<VersionList versions={[]} />);
    expect(screen.getByTestId("versions").textContent).toBe("No versions yet.");
  });

  it("lists each version with its short hash, notes and current deployments", () => {
    render(<VersionList versions={[{
      id: "v2", number: 2, content_sha256: "f".repeat(64), created_at: "2026-12-01T10:00:00Z",
      notes: "second", author: "alice",
      deployments: [{ agent_name: "support", current: true }, { agent_name: "old", current: false }],
    }]} />);
    const item = screen.getByTestId("versions").textContent ?? "";
    expect(item).toContain("v2");
    expect(item).toContain("f".repeat(12));
    expect(item).not.toContain("f".repeat(13));
    expect(item).toContain("alice");
    expect(item).toContain("second");
    expect(item).toContain("deployed: support (current), old");
  });

  it("offers Roll back only to an agent that ran an earlier version, and only with onRollback", () => {
    const at = "2026-12-01T10:00:00Z";
    const versions = [
      { id: "v3", number: 3, content_sha256: "c".repeat(64), created_at: at },
      { id: "v2", number: 2, content_sha256: "b".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "support", current: true }] },
      { id: "v1", number: 1, content_sha256: "a".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "support", current: false }] },
    ];
    const onRollback = vi.fn();
    render(<VersionList versions={versions} onRollback={onRollback} />);
    fireEvent.click(screen.getByRole("button", { name: "Roll back support" }));
    expect(onRollback).toHaveBeenCalledWith("a1", "support");
    cleanup();
    render(<VersionList versions={versions} />);
    expect(screen.queryByRole("button")).toBeNull();
    cleanup();
    render(<VersionList versions={versions.slice(0, 2)} onRollback={onRollback} />);
    expect(screen.queryByRole("button")).toBeNull();
  });

  it("marks a canary and never counts it as a version the agent ran before", () => {
    const at = "2026-12-01T10:00:00Z";
    render(<VersionList onRollback={vi.fn()} versions={[
      { id: "v2", number: 2, content_sha256: "b".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "support", current: false, canary: true }] },
      { id: "v1", number: 1, content_sha256: "a".repeat(64), created_at: at,
        deployments: [{ agent_id: "a1", agent_name: "support", current: true }] },
    ]} />);
    expect(screen.getByTestId("versions").textContent).toContain("deployed: support (canary)");
    expect(screen.queryByRole("button")).toBeNull();
  });
});
