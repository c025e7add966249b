import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { SaveAsCase, TestCases, type TestCase } from "./TestCases";
import { CaseResults } from "./EvaluationView";
import { serve } from "../test/serve";


const base = "/api/v1/agent-designs/d1/fixtures/cases";
const stored: TestCase = {
  id: "c1", name: "Refund", input: "I want a refund", tags: ["money"],
  history: [{ role: "user", content: "hi" }], approvals: "approve",
  expected: { calls: ["is-refund"], judge: { criteria: ["relevance"], reference: "Sure", min_score: 0.7 } },
};

afterEach(() => { cleanup(); vi.unstubAllGlobals(); });

describe("TestCases", () => {
  it("shows each case's input, history, tags, expected calls and judge criteria", () => {
    render(<TestCases designId="d1" cases={[stored]} canEdit={false} onChanged={async () => null} onError={() => undefined} />);
    const item = screen.getByTestId("case");
    expect(item.textContent).toContain("I want a refund");
    expect(item.textContent).toContain("user: hi");
    expect(item.textContent).toContain("#money");
    expect(item.textContent).toContain("expected calls: is-refund");
    expect(item.textContent).toContain("judge: relevance ≥ 0.7 · expected answer: Sure");
    expect(screen.queryByRole("button", { name: "Edit" })).toBeNull();  // a viewer reads only
  });

  it("edits a case with PUT (fields it does not show kept) and reads the cases again", async () => {
    const calls = serve({ [`PUT ${base}/c1`]: [200, { revision: 2, case: stored }] });
    const changed = vi.fn(async () => null);
    render(<TestCases designId="d1" cases={[stored]} canEdit={true} onChanged={changed} onError={() => undefined} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit" }));
    fireEvent.change(screen.getByLabelText("Input"), { target: { value: "Refund me" } });
    fireEvent.change(screen.getByLabelText("Tags"), { target: { value: "money, urgent" } });
    fireEvent.click(screen.getByLabelText(/safety/));
    fireEvent.click(screen.getByRole("button", { name: "Save case" }));
    await waitFor(() => expect(changed).toHaveBeenCalled());
    expect(calls).toHaveLength(1);
    expect(calls[0].method).toBe("PUT");
    expect(calls[0].body).toEqual({
      name: "Refund", input: "Refund me", tags: ["money", "urgent"],
      history: [{ role: "user", content: "hi" }], approvals: "approve",
      expected: { calls: ["is-refund"], judge: { criteria: ["relevance", "safety"], reference: "Sure", min_score: 0.7 } },
    });
  });

  it("deletes a case, and shows a refusal as answered", async () => {
    const calls = serve({ [`DELETE ${base}/c1`]: [403, { error: { code: "forbidden", message: "Editors only.", details: {} } }] });
    const onError = vi.fn();
    render(<TestCases designId="d1" cases={[stored]} canEdit={true} onChanged={async () => null} onError={onError} />);
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(onError).toHaveBeenCalled());
    expect(calls[0]).toMatchObject({ method: "DELETE", url: `${base}/c1` });
  });
});

describe("SaveAsCase", () => {
  it("saves a past run with its output as the expected answer", async () => {
    const calls = serve({ [`POST ${base}`]: [201, { revision: 4, case: { ...stored, name: "Parcel" } }] });
    render(<SaveAsCase designId="d1" run={{ id: "r1234567-0000", input: "Where?", output: "Here." }} />);
    const form = screen.getByTestId("save-as-case");
    fireEvent.change(within(form).getByLabelText("Case name"), { target: { value: "Parcel" } });
    expect((within(form).getByRole("checkbox") as HTMLInputElement).checked).toBe(true);
    fireEvent.click(within(form).getByRole("button", { name: "Save as test case" }));
    expect((await screen.findByRole("status")).textContent).toContain('Saved as test case "Parcel"');
    expect(calls[0].body).toEqual({ name: "Parcel", from_run: "r1234567-0000", expect_output: true });
  });

  it("cannot expect the output of a run that has none", () => {
    render(<SaveAsCase designId="d1" run={{ id: "r2", input: "x", output: null }} />);
    const box = screen.getByRole("checkbox") as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box.disabled).toBe(true);
  });
});

describe("CaseResults", () => {
  it("shows each case's output, path, scores and reason next to what it expected", () => {
    render(<CaseResults cases={[{
      case_id: "c1", name: "Refund", status: "failed", reason: "judge score 0.40 < 0.7",
      output: "No.", completed_calls: ["is-refund"], path: ["input", "is-refund"], judge_scores: { relevance: 0.4 },
      judge_reason: "Off topic.", expected: { calls: ["is-refund"], judge: { criteria: ["relevance"], reference: "Sure", min_score: 0.7 } },
    }]} />);
    const row = screen.getByTestId("case-result");
    expect(row.dataset.status).toBe("failed");
    expect(within(row).getByTestId("case-output").textContent).toBe("output: No.");
    expect(within(row).getByTestId("case-expected-answer").textContent).toBe("answer: Sure");
    expect(within(row).getByTestId("case-scores").textContent).toBe("scores: relevance 0.40");
    expect(row.textContent).toContain("path: input → is-refund");
    expect(row.textContent).toContain("judge: Off topic.");
    expect(row.textContent).toContain("criteria: relevance ≥ 0.7");
    expect(row.textContent).toContain("calls: is-refund (1 completed)");
  });
});
