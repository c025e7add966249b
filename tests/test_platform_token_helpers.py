"""kionga.tokens: one issuer and one hasher for API tokens and run credentials."""

from __future__ import annotations

import hashlib
import re

from django.contrib.auth.models import User
from hypothesis import given
from hypothesis import strategies as st

from kionga.models import ApiToken, Project
from kionga.tokens import hash_token, issue_token, new_token
from runs.models import RunCredential
from tests.internal_helpers import start_run

URL_SAFE_256_BITS = re.compile(r"[A-Za-z0-9_-]{43}")


@given(st.sampled_from(["kio_", "krc_", ""]))
def test_it_issues_the_prefix_and_256_random_bits(prefix: str) -> None:
    first, second = new_token(prefix), new_token(prefix)
    assert first.startswith(prefix) and URL_SAFE_256_BITS.fullmatch(first[len(prefix):])
    assert first != second


@given(st.text())
def test_it_stores_a_sha256_of_any_value(raw: str) -> None:
    assert hash_token(raw) == hashlib.sha256(raw.encode("utf-8")).hexdigest()


def test_api_tokens_and_run_credentials_share_the_hasher(
        carol: User, acme: Project) -> None:
    raw_token = issue_token(carol, "ci")
    run, raw_credential = start_run(carol, acme)
    assert ApiToken.objects.get(user=carol, name="ci").token_hash == hash_token(raw_token)
    assert RunCredential.objects.get(run=run).token_hash == hash_token(raw_credential)
