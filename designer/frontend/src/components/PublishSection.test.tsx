import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import type { Evaluation } from "./EvaluationView";
import { PublishSection } from "./PublishSection";
import type { Design } from "../types";

const design: Design = {
  id: "d1", project_id: 1, name: "Agent", description: "", revision: 3, require_evaluation: false,
  created_at: "2026-12-01T10:00:00Z", updated_at: "2026-12-01T10:00:00Z",
  graph: { schema_version: 2, nodes: [], edges: [] },
  validation: { runnable: true, issues: [], content_sha256: "a".repeat(64) }, revisions: [],
};

const passed = (id: string, revision = 3) => ({
  id, revision, gate: true, status: "completed", passed: true, content_sha256: "a".repeat(64),
  progress: { done: 2, total: 2 }, counts: { total: 2, passed: 2, failed: 0, cancelled: 0 },
  all_cases: true, design_cases: 2,
}) as unknown as Evaluation;

function section(evaluation: Evaluation | null) {
  return <PublishSection design={design} dirty={false} canEdit={true} busy={false}
                         act={async () => undefined} evaluation={evaluation}
                         onPublished={async () => undefined} />;
}

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

describe("PublishSection", () => {
  it("offers a newer passing evaluation checked, even after the one before was unchecked", () => {
    const { rerender } = render(section(passed("e1111111-0000")));
    const first = screen.getByRole("checkbox", { name: /with evaluation e1111111/ }) as HTMLInputElement;
    fireEvent.click(first);
    expect(first.checked).toBe(false);
    rerender(section(passed("e2222222-0000")));
    const next = screen.getByRole("checkbox", { name: /with evaluation e2222222/ }) as HTMLInputElement;
    expect(next.checked).toBe(true);
  });

  it("does not offer an evaluation of another revision", () => {
    render(section(passed("e1111111-0000", 2)));
    expect(screen.queryByRole("checkbox", { name: /with evaluation/ })).toBeNull();
  });
});
