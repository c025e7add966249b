"""``manage.py reencrypt_secrets``: every resource secret moved to the first key of
KIONGA_SECRET_KEYS (kionga.secret_storage.reencrypt_all).

Resumable: values already under the first key are skipped, each row is its own
transaction. Audited (``secrets.reencrypted`` with the counts and the key id). Once
it reports nothing left under an old key, that key can leave the setting.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from kionga import audit, secret_box
from kionga.secret_storage import key_id_counts, reencrypt_all


class Command(BaseCommand):
    help = "Re-encrypt every resource secret under the first key of KIONGA_SECRET_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            first = secret_box.configured_keys().ids[0]
            done = reencrypt_all()
        except secret_box.SecretKeyError as exc:
            raise CommandError(str(exc)) from None
        left = {column: sum(n for kid, n in found.items() if kid != first)
                for column, found in key_id_counts().items()}
        audit.record("secrets.reencrypted", target_type="key", target_id=first,
                     details={"reencrypted": done, "left_under_other_keys": left})
        self.stdout.write(json.dumps({"key_id": first, "reencrypted": done,
                                      "left_under_other_keys": left}))
