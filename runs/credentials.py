"""Run credentials: ``krc_`` + 43 url-safe characters (256 random bits), one per run.

The runner gets the raw value in its signed task and presents it to the gateway's
internal listener. Issued and hashed as API tokens are (kionga.tokens). A credential
is good while it is not revoked, its run is active and it is younger than
CREDENTIAL_MAX_AGE; runs.run_auth adds that the run is still in flight (its capacity
slot, which the runner frees when the run ends).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from django.contrib.auth.models import User
from django.db import models
from django.utils import timezone

from kionga import prepared_sql
from kionga.models import Membership
from kionga.tokens import hash_token, new_token
from runs.models import ACTIVE_STATUSES, Run, RunCredential

CREDENTIAL_PREFIX = "krc_"
# Far beyond any run (timeout_seconds ≤ 300): it only bounds a leaked credential of a
# run whose row still says active because its runner died before the reaper ran.
CREDENTIAL_MAX_AGE = timedelta(hours=1)


def issue_credential(run: Run, *, fresh: bool = False) -> str:
    """Create the run's credential and return the raw value; it is never retrievable again.

    A re-dispatched run gets a new value and the old one stops working; `fresh` says
    the run was just created, so there is none to replace (one statement less).
    """
    raw, row = new_credential(run)
    if not fresh:
        RunCredential.objects.filter(run=run).delete()
    row.save(force_insert=True)
    return raw


def new_credential(run: Run) -> tuple[str, RunCredential]:
    """A new raw credential and its row, not saved yet (runs.start_sql stores it)."""
    raw = new_token(CREDENTIAL_PREFIX)
    return raw, prepared_sql.new_row(RunCredential, run=run, token_hash=hash_token(raw))


def revoke_credential(run: Run) -> None:
    """Stop the run's credential from working (idempotent; keeps the first revocation time)."""
    revoke_credentials([run])


_REVOKE = (f"UPDATE {RunCredential._meta.db_table} SET revoked_at = %b::timestamptz "
           "WHERE run_id = ANY(%b::uuid[]) AND revoked_at IS NULL")


def revoke_credentials(runs: Sequence[Run]) -> None:
    """Revoke the runs' live credentials (one prepared statement: the ingester calls
    this for every batch of ended runs)."""
    prepared_sql.execute(_REVOKE, [timezone.now(), [run.pk for run in runs]])


@dataclass(frozen=True)
class FoundCredential:
    """A run credential with its run (and the run's starter, run.created_by) and the
    starter's role in the run's project (None: no longer a member)."""

    run: Run
    revoked: bool
    starter_role: str | None
    # The row asked for with the credential (find_credential's `resource`): the
    # resource of that key in the run's project, None when there is none.
    resource: Any = None

    @property
    def live(self) -> bool:
        return not self.revoked and self.run.status in ACTIVE_STATUSES


# The internal listener reads this for every resource call a run makes: one prepared
# statement (the credential, its run, the starter and the starter's membership, and
# the route's resource of the run's project when asked for).
_FIND: Final = f"""
SELECT c.revoked_at IS NOT NULL, m.role, {prepared_sql.columns(Run, "r")},
       {prepared_sql.columns(User, "u")}{{resource_columns}}
FROM {RunCredential._meta.db_table} c
JOIN {Run._meta.db_table} r ON r.id = c.run_id
LEFT JOIN {User._meta.db_table} u ON u.id = r.created_by_id
LEFT JOIN {Membership._meta.db_table} m
  ON m.project_id = r.project_id AND m.user_id = r.created_by_id{{resource_join}}
WHERE c.token_hash = %(hash)s AND c.created_at > %(since)s
"""


@functools.cache
def _find(resource: type[models.Model] | None) -> str:
    """_FIND, with `resource`'s row of the run's project whose key is %(key)s (its
    columns after the starter's: all NULL when there is no such row)."""
    if resource is None:
        return _FIND.format(resource_columns="", resource_join="")
    return _FIND.format(
        resource_columns=f", {prepared_sql.columns(resource, 'e')}",
        resource_join=f"\nLEFT JOIN {resource._meta.db_table} e"
                      "\n  ON e.project_id = r.project_id AND e.key = %(key)s")


def find_credential(raw_token: str, resource: type[models.Model] | None = None,
                    key: str = "") -> FoundCredential | None:
    """The credential raw_token is, revoked or not, unless unknown or too old; with
    `resource` also the row of that model of the run's project whose key is `key`
    (FoundCredential.resource), in the same read. The caller checks that the run may
    use it (runs.internal.checks.check_found)."""
    if not raw_token.startswith(CREDENTIAL_PREFIX):
        return None
    # An exact lookup on the unique hash: timing can at most reveal a hash prefix, and
    # a hash of a random 256-bit value gives nothing back about the value.
    token_hash, since = hash_token(raw_token), timezone.now() - CREDENTIAL_MAX_AGE
    params: dict[str, Any] = {"hash": token_hash, "since": since}
    if resource is not None:
        params["key"] = key
    rows = prepared_sql.fetch_all(_find(resource), params)
    if not rows:
        return None
    revoked, role, *values = rows[0]
    run, rest = prepared_sql.take(Run, values)
    starter, rest = rest[:len(User._meta.concrete_fields)], rest[len(User._meta.concrete_fields):]
    run.created_by = None if starter[0] is None else prepared_sql.take(User, starter)[0]
    found = None if resource is None or rest[0] is None else prepared_sql.take(resource, rest)[0]
    return FoundCredential(run, bool(revoked), role, found)


def find_active_run(raw_token: str) -> Run | None:
    """The run whose live credential is raw_token, or None (unknown, revoked, old, run ended)."""
    found = find_credential(raw_token)
    return found.run if found is not None and found.live else None
