import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
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
});
