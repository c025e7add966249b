"""kionga.settings with the suite's password hashers (tests/password_hashers.py), for
the gateway and workers of the end-to-end stack: the people the tests create in the
pytest process sign in there (browser tests, the CLI's approval link)."""

from kionga.settings import *  # noqa: F401,F403
from tests.password_hashers import TEST_PASSWORD_HASHERS

PASSWORD_HASHERS = TEST_PASSWORD_HASHERS
