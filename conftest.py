"""Repository-wide pytest setup.

The suite runs against real PostgreSQL (bin/test sets DATABASE_URL; settings accept
no other database).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings as hypothesis_settings

from tests import db_reset
from tests.password_hashers import TEST_PASSWORD_HASHERS
from tests.secret_key import TEST_SECRET_KEY

# httpx logs one INFO line per request: that would drown the output (and fail the
# suite's quiet-output check) in every test that talks HTTP.
logging.getLogger("httpx").setLevel(logging.WARNING)

# The loopback test peers (tests/loopback.py) are not public addresses: the egress
# policy (kionga.egress) must allow them. os.environ for the listeners tests start as
# processes; the fixture below for this process, whose settings are already loaded.
TEST_EGRESS_ALLOW = ["127.0.0.1"]
os.environ.setdefault("KIONGA_EGRESS_ALLOW", ",".join(TEST_EGRESS_ALLOW))

# Resource secrets are encrypted under KIONGA_SECRET_KEYS (kionga.secret_box): a fixed
# test key, for this process (settings already loaded) and the processes tests start.
os.environ.setdefault("KIONGA_SECRET_KEYS", TEST_SECRET_KEY)  # tests/secret_key.py


def _test_secret_keys() -> None:
    from django.conf import settings

    if not settings.KIONGA_SECRET_KEYS:
        settings.KIONGA_SECRET_KEYS = os.environ["KIONGA_SECRET_KEYS"].split(",")


_test_secret_keys()


def _test_password_hashers() -> None:
    # A fast hasher for the passwords tests create (tests/password_hashers.py says why).
    from django.conf import settings

    settings.PASSWORD_HASHERS = TEST_PASSWORD_HASHERS


_test_password_hashers()

# A transactional test's reset DELETEs the rows it left instead of Django's TRUNCATE of
# every table (tests/db_reset.py says why: most of the suite's time went there).
db_reset.install()

# CI runs the property and fuzz tests on a fixed seed, so a red build is reproducible
# (and never a coin toss); runs elsewhere explore new examples every time.
hypothesis_settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _egress_allows_loopback() -> Iterator[None]:
    # Not pytest-django's `settings` fixture: some tests have a parameter of that name.
    from django.test import override_settings

    with override_settings(KIONGA_EGRESS_ALLOW=TEST_EGRESS_ALLOW):
        yield


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """One test database per pytest process (``test_kionga_<pid>``).

    Several people or agents run the suite at the same time against the same
    PostgreSQL; a shared ``test_kionga`` would make their runs destroy each
    other's database. pytest-django drops it again at the end of the run.
    """
    from django.conf import settings

    for db in settings.DATABASES.values():
        test = db.setdefault("TEST", {})
        test["NAME"] = f"{test.get('NAME') or 'test_' + str(db['NAME'])}_{os.getpid()}"


# Fixtures shared by several test files, kept beside the tests that use them.
pytest_plugins = ["tests.runs_helpers", "tests.ingest_helpers", "tests.redis_kit"]
