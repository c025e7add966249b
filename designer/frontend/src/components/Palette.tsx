// The palette: the registry's components, grouped; drag one onto the canvas, or focus it
// and press Enter (or click) to add it at the centre of the view.
import { useState } from "react";
import { grouped } from "../palette";
import type { ComponentSpec } from "../types";

interface Props {
  components: ComponentSpec[];
  onAdd: (kind: string) => void;
  mime: string;
  disabled?: boolean;
}

export function Palette({ components, onAdd, mime, disabled }: Props) {
  const [filter, setFilter] = useState("");
  const groups = grouped(components, filter);
  return (
    <nav className="palette" aria-label="Components">
      <label htmlFor="palette-search" className="sr-only">Search components</label>
      <input id="palette-search" type="search" placeholder="Search (/)" value={filter}
             aria-keyshortcuts="/" title="Search components (/)"
             onChange={(e) => setFilter(e.target.value)} />
      {groups.map(([group, list]) => (
        <div key={group} className="palette-group" role="group" aria-label={group}>
          <h3>{group}</h3>
          {list.map((c) => (
            <button key={c.kind} type="button" className={`palette-item kind-${c.kind}`} draggable={!disabled}
                    disabled={disabled} data-kind={c.kind} title={c.help}
                    aria-label={`Add ${c.label}`}
                    onDragStart={(e) => { e.dataTransfer.setData(mime, c.kind); e.dataTransfer.effectAllowed = "copy"; }}
                    onClick={() => onAdd(c.kind)}>
              <span className="dot" aria-hidden="true" />
              <span className="p-label">{c.label}</span>
              {c.side_effects && <span className="p-flag" title="Side effects">⚡</span>}
            </button>
          ))}
        </div>
      ))}
    </nav>
  );
}
