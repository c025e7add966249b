"""Run credentials: ``krc_`` + 43 url-safe characters (256 random bits), one per run.

The runner gets the raw value in its signed task and presents it to the gateway's
internal listener. Issued and hashed as API tokens are (kionga.tokens). A credential
is good while it is not revoked, its run is active and it is younger than
CREDENTIAL_MAX_AGE; runs.run_auth adds that the run is still in flight (its capacity
slot, which the runner frees when the run ends).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.utils import timezone

from kionga import prepared_sql
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
    return raw, RunCredential(run=run, token_hash=hash_token(raw))


def revoke_credential(run: Run) -> None:
    """Stop the run's credential from working (idempotent; keeps the first revocation time)."""
    revoke_credentials([run])


_REVOKE = (f"UPDATE {RunCredential._meta.db_table} SET revoked_at = %b::timestamptz "
           "WHERE run_id = ANY(%b::uuid[]) AND revoked_at IS NULL")


def revoke_credentials(runs: Sequence[Run]) -> None:
    """Revoke the runs' live credentials (one prepared statement: the ingester calls
    this for every batch of ended runs)."""
    if not prepared_sql.available():
        RunCredential.objects.filter(run__in=runs, revoked_at__isnull=True).update(
            revoked_at=timezone.now())
        return
    prepared_sql.execute(_REVOKE, [timezone.now(), [run.pk for run in runs]])


def find_credential(raw_token: str) -> RunCredential | None:
    """The credential raw_token is, revoked or not, unless unknown or too old."""
    if not raw_token.startswith(CREDENTIAL_PREFIX):
        return None
    # An exact lookup on the unique hash: timing can at most reveal a hash prefix, and
    # a hash of a random 256-bit value gives nothing back about the value.
    return RunCredential.objects.select_related("run__project", "run__created_by").filter(
        token_hash=hash_token(raw_token),
        created_at__gt=timezone.now() - CREDENTIAL_MAX_AGE,
    ).first()


def is_live(credential: RunCredential) -> bool:
    return credential.revoked_at is None and credential.run.status in ACTIVE_STATUSES


def find_active_run(raw_token: str) -> Run | None:
    """The run whose live credential is raw_token, or None (unknown, revoked, old, run ended)."""
    credential = find_credential(raw_token)
    return credential.run if credential is not None and is_live(credential) else None
