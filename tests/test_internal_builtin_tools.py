"""Built-in tools stay cheap on any input: linear-time matching (RE2) and a bound on
the input, past which the run gets a clear 422 (before: extract_emails's regex was
quadratic, and one 30,000-character input froze every tenant's resource calls)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from contracts.registry import LIMITS
from kionga.builtin_tools import BUILTIN_TOOLS
from kionga.models import Project
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")


def invoke(credential: str, name: str, value: object) -> Any:
    return run_client(credential).post(BASE + f"functions/{name}/invoke", {"input": value},
                                       format="json")


def test_it_finds_emails_in_any_script() -> None:
    found = BUILTIN_TOOLS["extract_emails"]("to jörg@example.com, a.b+c@x-y.org")
    assert found == {"emails": ["jörg@example.com", "a.b+c@x-y.org"]}


def test_it_finishes_the_worst_case_input(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    response = invoke(raw, "extract_emails", "a" * 30_000)
    assert response.status_code == 200, response.content
    assert response.json() == {"output": {"emails": []}}


@pytest.mark.parametrize("name", sorted(BUILTIN_TOOLS))
def test_it_refuses_an_input_past_the_bound(api: Api, carol: User, acme: Project,
                                            name: str) -> None:
    _, raw = start_run(carol, acme)
    too_long = " " * (LIMITS["value_chars"] + 1)
    error = api.assert_error(invoke(raw, name, too_long), 422, "tool_failed")
    assert error["message"] == (f"Built-in tool {name!r}: the input has 1,000,001 characters; "
                                "built-in tools take at most 1,000,000.")
