"""The built canvas: Vite's manifest names the hashed files a page must load.

`npm run build` (bin/_setup.sh's ensure_canvas) writes the bundle and its manifest under
designer/static/designer/canvas/ (git-ignored); the staticfiles finders serve it from
there. Without node there is no manifest and the page says how to build it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

BUILD_DIR: Final = Path(__file__).resolve().parent / "static" / "designer" / "canvas"
MANIFEST: Final = BUILD_DIR / ".vite" / "manifest.json"
ENTRY: Final = "src/main.tsx"
STATIC_PREFIX: Final = "designer/canvas/"


@dataclass(frozen=True)
class Assets:
    """Static paths (relative to STATIC_URL) of the entry's script and styles."""

    script: str
    styles: tuple[str, ...]


def canvas_assets(manifest: Path | None = None) -> Assets | None:
    """The entry's assets, or None when the canvas was not built (or the manifest is bad)."""
    try:
        data: Any = json.loads((manifest or MANIFEST).read_text(encoding="utf-8"))
        entry = data[ENTRY]
        script = str(entry["file"])
        styles = tuple(str(css) for css in entry.get("css", []))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Assets(STATIC_PREFIX + script, tuple(STATIC_PREFIX + css for css in styles))
