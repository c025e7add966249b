"""Node records (runner/records.py): checked and stored by the ingester, read by the API.

The runner writes each record to the ingest stream as a record entry (runner/protocol.py
record_fields) with the MAC of its run's event key, so only the run's own runner can
have a record stored for it. A record is a view of the run, never its cause: one that
cannot be stored is dead-lettered without failing the run.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Final

from django.db import transaction

from kionga import prepared_sql
from kionga.access import AnyUser
from kionga.errors import not_found
from runner.records import MAX_RECORD_BYTES, STATUSES
from runner.redact import PREVIEW_CHARS
from runs.models import NodeRecord, Run
from runs.read import check_run_access

# The runner's per-node retries are few; anything past this is not a real attempt.
MAX_ATTEMPT: Final = 1_000
MAX_NODE_ID: Final = NodeRecord._meta.get_field("node_id").max_length or 64
# Per-node and total figures fit their columns (PostgreSQL integer and bigint).
MAX_DURATION_MS: Final = 2**31 - 1
MAX_TOKENS: Final = 2**63 - 1


@dataclass(frozen=True)
class RecordRow:
    run_id: str
    node_id: str
    attempt: int
    status: str
    tokens: int
    duration_ms: int
    data: dict[str, Any]


def decode(run_id: str, encoded: bytes) -> RecordRow | str:
    """The row to store, or why the entry cannot be one (a dead letter's reason)."""
    if len(encoded) > MAX_RECORD_BYTES:
        return "record_too_large"
    try:
        data = json.loads(encoded)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "invalid_json"
    if not isinstance(data, dict):
        return "not_a_record"
    node_id, attempt, status = data.get("node_id"), data.get("attempt"), data.get("status")
    usage = data.get("usage")
    tokens = usage.get("tokens", 0) if isinstance(usage, dict) else 0
    duration = data.get("duration_ms", 0)
    if not (isinstance(node_id, str) and 0 < len(node_id) <= MAX_NODE_ID
            and type(attempt) is int and 1 <= attempt <= MAX_ATTEMPT and status in STATUSES
            and type(tokens) is int and 0 <= tokens <= MAX_TOKENS
            and type(duration) is int and 0 <= duration <= MAX_DURATION_MS):
        return "not_a_record"
    return RecordRow(run_id, node_id, attempt, status, tokens, duration, data)


def store(rows: list[RecordRow], refused_by: tuple[type[Exception], ...]) -> list[RecordRow]:
    """Store the rows of runs that exist (once each: a repeated entry is ignored);
    returns the rows the database refused (`refused_by`: the ingester's errors that
    are an entry's fault), tried one by one after a refused batch."""
    if not rows:
        return []
    try:
        with transaction.atomic():
            insert(rows)
        return []
    except refused_by:
        pass
    refused: list[RecordRow] = []
    for row in rows:
        try:
            with transaction.atomic():
                insert([row])
        except refused_by:
            refused.append(row)
    return refused


_INSERT: Final = (
    f"INSERT INTO {NodeRecord._meta.db_table} "
    "(run_id, node_id, attempt, status, tokens, duration_ms, data) "
    "SELECT v.* FROM unnest(%b::uuid[], %b::varchar[], %b::integer[], %b::varchar[], "
    "%b::bigint[], %b::integer[], %b::jsonb[]) "
    "AS v(run_id, node_id, attempt, status, tokens, duration_ms, data) "
    f"WHERE EXISTS (SELECT 1 FROM {Run._meta.db_table} r WHERE r.id = v.run_id) "
    "ON CONFLICT DO NOTHING")


def insert(rows: list[RecordRow]) -> None:
    """The rows of runs that exist (a pruned or unknown run's are dropped), once each,
    in one prepared statement whatever their number (kionga.prepared_sql)."""
    if rows:
        prepared_sql.execute(_INSERT, [[uuid.UUID(r.run_id) for r in rows],
                                       [r.node_id for r in rows], [r.attempt for r in rows],
                                       [r.status for r in rows], [r.tokens for r in rows],
                                       [r.duration_ms for r in rows],
                                       [json.dumps(r.data) for r in rows]])


def summary(data: dict[str, Any]) -> dict[str, Any]:
    """A record without its values (a preview of its output instead): for lists."""
    output = data.get("output") if isinstance(data.get("output"), dict) else None
    found = {k: v for k, v in data.items() if k not in ("inputs", "output")}
    found["port"] = output.get("port") if output else None
    found["preview"] = _preview(output.get("value")) if output else None
    return found


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:PREVIEW_CHARS]


def check_run_nodes(user: AnyUser, design_id: uuid.UUID, run_id: uuid.UUID) -> dict[str, Any]:
    """Every record of a readable run (summaries, by node then attempt)."""
    run = check_run_access(user, design_id, run_id)
    rows = NodeRecord.objects.filter(run=run).order_by("node_id", "attempt")
    return {"run_id": str(run.pk), "nodes": [summary(r.data) for r in rows]}


def check_run_node(user: AnyUser, design_id: uuid.UUID, run_id: uuid.UUID,
                   node_id: str) -> dict[str, Any]:
    """Every attempt of one node of a readable run, whole; 404 without any."""
    run = check_run_access(user, design_id, run_id)
    rows = list(NodeRecord.objects.filter(run=run, node_id=node_id).order_by("attempt"))
    if not rows:
        raise not_found(f"Node {node_id!r} has no record in this run.")
    return {"run_id": str(run.pk), "node_id": node_id, "attempts": [r.data for r in rows]}


def reusable_records(run: Run) -> dict[str, dict[str, Any]]:
    """The last attempt of each node of `run` that completed (or repeated a recorded
    outcome), by node ID: what a re-run may repeat."""
    found: dict[str, dict[str, Any]] = {}
    for data in (NodeRecord.objects.filter(run=run, status__in=("completed", "reused"))
                 .order_by("node_id", "attempt").values_list("data", flat=True)):
        found[data["node_id"]] = data
    return found
