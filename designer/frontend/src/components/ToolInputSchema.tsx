// The input an MCP tool takes, from its listed JSON Schema: one line per top-level
// property (name, type, required, description), so a graph author sees what JSON
// object to send the tool node.
import type { ToolInputSchema as Schema } from "../types";

export interface SchemaField {
  name: string;
  type: string;
  required: boolean;
  description?: string;
}

export function schemaFields(schema: Schema | undefined): SchemaField[] {
  const properties = schema?.properties ?? {};
  const required = new Set(Array.isArray(schema?.required) ? schema!.required : []);
  return Object.entries(properties).map(([name, property]) => {
    const type = Array.isArray(property?.type) ? property.type.join(" | ") : property?.type;
    return { name, type: type ?? "any", required: required.has(name),
             description: typeof property?.description === "string" ? property.description : undefined };
  });
}

export function ToolInputSchema({ schema }: { schema: Schema | undefined }) {
  const fields = schemaFields(schema);
  return (
    <div className="grammar" data-testid="tool-input-schema">
      <div className="muted small">
        {fields.length ? "Input: a JSON object with" : "Input: a JSON object (the tool lists no properties)."}
      </div>
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={f.name}>
              <code>{f.name}</code> ({f.type}{f.required ? ", required" : ""}){f.description ? ` — ${f.description}` : ""}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
