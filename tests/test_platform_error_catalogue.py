"""One error-code catalogue (kionga.errors.ErrorCode): every code a client may see is
declared there once, each is documented in docs/api.md, and nothing answers a code
outside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kionga.errors import ERROR_CODES, STATUS_CODES, code_for_status
from runner.failures import FailureCode

ROOT = Path(__file__).resolve().parent.parent
API_DOCS = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
DOCUMENTED = set(re.findall(r"`([a-z][a-z_]+)`", API_DOCS))


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_it_documents_every_api_error_code_in_the_api_docs(code: str) -> None:
    assert code in DOCUMENTED


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_it_names_each_code_in_snake_case(code: str) -> None:
    assert re.fullmatch(r"[a-z]+(_[a-z0-9]+)*", code)


def test_it_falls_back_only_to_catalogued_codes() -> None:
    assert set(STATUS_CODES.values()) <= ERROR_CODES
    assert {code_for_status(status) for status in range(400, 600)} <= ERROR_CODES


def test_it_documents_the_run_failure_codes_too() -> None:
    from typing import get_args

    assert set(get_args(FailureCode)) - DOCUMENTED == set()
