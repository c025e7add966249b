// Earlier turns of a conversation, typed by a person as one turn per line:
// "user: Hi", "assistant: Hello!", "system: Be brief". A line without a known
// role prefix continues the previous turn (multi-line messages).

export interface Turn {
  role: "user" | "assistant" | "system";
  content: string;
}

const ROLE_LINE = /^(user|assistant|system):\s?(.*)$/i;

export function parseTurns(text: string): { turns: Turn[]; error: string | null } {
  const turns: Turn[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const match = ROLE_LINE.exec(line);
    if (match) {
      turns.push({ role: match[1].toLowerCase() as Turn["role"], content: match[2] });
    } else if (turns.length) {
      turns[turns.length - 1].content += "\n" + line;
    } else if (line.trim()) {
      return { turns: [], error: `Line ${i + 1}: start a turn with "user:", "assistant:" or "system:".` };
    }
  }
  for (const turn of turns) turn.content = turn.content.replace(/\s+$/, "");
  return { turns, error: null };
}
