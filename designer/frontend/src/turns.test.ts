import { describe, expect, it } from "vitest";
import { parseTurns } from "./turns";

describe("parseTurns", () => {
  it("reads one turn per role line, case-insensitively", () => {
    expect(parseTurns("user: Hi\nAssistant: Hello!\nsystem: Be brief")).toEqual({
      turns: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
        { role: "system", content: "Be brief" },
      ],
      error: null,
    });
  });

  it("keeps multi-line messages together and trims trailing blank lines", () => {
    expect(parseTurns("user: first line\nsecond line\n\n").turns).toEqual([
      { role: "user", content: "first line\nsecond line" },
    ]);
  });

  it("is empty for blank text and explains a line without a role", () => {
    expect(parseTurns("  \n")).toEqual({ turns: [], error: null });
    expect(parseTurns("hello\nuser: x").error).toMatch(/^Line 1: start a turn with/);
  });
});
