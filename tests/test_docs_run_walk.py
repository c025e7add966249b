"""docs/architecture.md walks one run in at most 15 files, and each file it names exists
(a rename that forgets the walk fails here)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def walk_rows() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## One run, file by file", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]


def test_the_walk_names_at_most_fifteen_files_that_exist() -> None:
    rows = walk_rows()
    assert 0 < len(rows) <= 15
    for row in rows:
        named = re.findall(r"`([\w/]+\.py)`", row)
        assert named, row
        for path in named:
            assert (ROOT / path).is_file(), f"{path} (named in the walk) does not exist"
