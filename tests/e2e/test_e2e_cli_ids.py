"""IDs in `kionga`: tables print them whole on an 80-column output (people copy them;
behaviour hashes short, as git's), and wherever an ID is an argument a unique prefix of
it works, as git takes a short hash; an ambiguous prefix is a USAGE error naming the
matches, an unknown one is not found."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from designs.actions import graph_to_store
from designs.models import Design, DesignRevision
from kionga.models import Project
from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, assistant_graph, graph_file
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def design_with_id(owner: Any, project: Project, design_id: str) -> str:
    """A design whose ID we choose (two that share a prefix)."""
    design = Design.objects.create(id=uuid.UUID(design_id), project=project, name=design_id,
                                   created_by=owner, revision=1)
    DesignRevision.objects.create(design=design, number=1, author=owner,
                                  graph=graph_to_store(assistant_graph()))
    return design_id


def test_tables_print_whole_ids(stack: Stack, api: Api, alice: Any, tmp_path: Path) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    gated = kionga("designs", "create", "--file",
                   graph_file(tmp_path, approval_graph()))["data"]["design_id"]
    run_id = kionga("run", gated, "--input", "x", "--detach")["data"]["run_id"]
    published = kionga("publish", design_id)["data"]
    version_id, sha = published["version_id"], published["content_sha256"]
    listed, _ = kionga.human("designs", "list")
    assert design_id in listed and gated in listed
    versions, _ = kionga.human("versions", "list", design_id)
    assert version_id in versions
    assert f" {sha[:12]} " in versions and sha not in versions  # a hash, short as git's
    approval_id = wait_for(lambda: kionga("approvals", "list")["data"]["approvals"])[0]["id"]
    pending, _ = kionga.human("approvals", "list")
    assert run_id in pending and approval_id in pending
    runs, _ = kionga.human("runs", "list", "--design", gated)
    assert run_id in runs
    assert "…" not in listed + versions + pending


def test_a_unique_prefix_names_the_design_run_or_evaluation(stack: Stack, api: Api,
                                                           alice: Any) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    short = design_id[:8]
    assert kionga("designs", "show", short)["data"]["id"] == design_id
    assert kionga("designs", "show", design_id.upper())["data"]["id"] == design_id
    assert kionga("validate", short)["data"]["design_id"] == design_id
    run_id = kionga("run", short, "--input", "hi")["data"]["run_id"]
    shown = kionga("runs", "show", run_id[:6])["data"]
    assert (shown["run_id"], shown["design_id"]) == (run_id, design_id)
    assert kionga("runs", "events", run_id[:6], "--design", short)["data"]["run_id"] == run_id
    assert kionga("runs", "list", "--design", short)["data"]["runs"][0]["run_id"] == run_id
    put_fixtures(Http(stack, api.token_for(alice)), design_id)
    evaluation_id = kionga("evaluate", short)["data"]["evaluation_id"]
    published = kionga("publish", short, "--evaluation", evaluation_id[:8])["data"]
    assert published["created"] is True
    assert kionga("versions", "list", short)["data"]["versions"][0]["id"] == (
        published["version_id"])


def put_fixtures(http: Http, design_id: str) -> None:
    """One case the assistant template passes."""
    answer = http.client.put(
        f"/api/v1/agent-designs/{design_id}/fixtures", json={"revision": 0, "cases": [
            {"name": "answers", "input": "hi", "expected": {"calls": ["model", "output"]}}]})
    assert answer.status_code == 200, answer.text


def test_an_ambiguous_short_or_unknown_prefix_is_refused(stack: Stack, api: Api, alice: Any,
                                                        acme: Project, mallory: Any,
                                                        evil: Project) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    first = design_with_id(alice, acme, "abcd1000-0000-4000-8000-000000000001")
    second = design_with_id(alice, acme, "abcd2000-0000-4000-8000-000000000002")
    ambiguous = kionga("designs", "show", "abcd", code=2)
    assert ambiguous["error"]["code"] == "USAGE"
    assert first in ambiguous["error"]["message"] and second in ambiguous["error"]["message"]
    assert ambiguous["data"] == {"matches": [first, second]}
    assert ambiguous["error"]["hint"] == "Give more characters of the ID."
    assert kionga("designs", "show", "ABCD1")["data"]["id"] == first
    assert kionga("run", "abcd", "--dry-run", code=2)["error"]["code"] == "USAGE"
    too_short = kionga("designs", "show", "abc", code=2)["error"]
    assert too_short["code"] == "USAGE" and "at least 4" in too_short["message"]
    unknown = kionga("designs", "show", "ffff", code=7)["error"]
    assert (unknown["code"], unknown["message"]) == (
        "DESIGN_NOT_FOUND", "No design ID starts with 'ffff'.")
    assert kionga("runs", "show", "ffff", code=7)["error"]["code"] == "RUN_NOT_FOUND"
    assert kionga("publish", first, "--evaluation", "ffff", code=7)["error"]["code"] == (
        "EVALUATION_NOT_FOUND")
    _, said = kionga.human("designs", "show", "abcd", code=2)
    assert "is ambiguous: 2 design IDs start with it" in said
    # Another tenant's design is not among yours: its prefix names nothing for you.
    theirs = design_with_id(mallory, evil, "abce3000-0000-4000-8000-000000000003")
    assert kionga("designs", "show", "abce", code=7)["error"]["code"] == "DESIGN_NOT_FOUND"
    assert Kionga(stack, api.token_for(mallory))("designs", "show", "abce")["data"]["id"] == (
        theirs)
