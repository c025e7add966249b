"""The documentation's relative links lead somewhere: every `[text](target)` in README.md
and docs/ (decisions included) names a file of the repository and, with `#anchor`, a
heading of that Markdown file. Links to other sites are not followed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_platform_purity import ROOT

DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def relative_links(document: Path) -> list[str]:
    """Link targets outside code, without the ones that leave the repository."""
    text = CODE_SPAN.sub("", FENCE.sub("", document.read_text(encoding="utf-8")))
    return [target for target in LINK.findall(text)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def anchors(document: Path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    text = FENCE.sub("", document.read_text(encoding="utf-8"))
    headings = re.findall(r"^#+\s+(.*?)\s*$", text, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def broken(document: Path, target: str) -> str | None:
    path, _, anchor = target.partition("#")
    destination = (document.parent / path).resolve() if path else document
    if not destination.exists():
        return f"{target}: no such file"
    if not destination.is_relative_to(ROOT):
        return f"{target}: outside the repository"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{target}: no heading #{anchor}"
    return None


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_relative_link_points_to_an_existing_file(document: Path) -> None:
    problems = [problem for target in relative_links(document)
                if (problem := broken(document, target))]
    assert problems == []


def test_the_readme_links_every_document_of_docs() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve()
              for target in relative_links(ROOT / "README.md")}
    top_level = {path.resolve() for path in (ROOT / "docs").glob("*.md")}
    assert top_level - linked == set()
    assert (ROOT / "docs" / "decisions" / "README.md").resolve() in linked


def test_it_finds_a_broken_link() -> None:
    missing = "docs/no-such-file.md"
    assert broken(ROOT / "README.md", missing) == f"{missing}: no such file"
    assert broken(ROOT / "README.md", "docs/operations.md#no-such-heading") is not None
