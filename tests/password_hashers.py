"""The suite's password hashers: Django's MD5 hasher first, as Django's testing docs
advise. The product's PBKDF2 (a million iterations) takes about a second a password on
the 2-core CI machine, and every named user of a test (alice, bob, ...) has one. The
product's hashers stay after it, so a password hashed by a process that runs the
product's own settings still checks."""

from __future__ import annotations

from django.conf import global_settings

TEST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                         *global_settings.PASSWORD_HASHERS]
