"""Drain run events from Redis into PostgreSQL: every stored event exactly once, in order.

The runner appends stored events to one shared stream (runs/ingest_stream.py reads
it); this module checks each entry, inserts the events (unique run + seq, so a
redelivered entry is a no-op), applies them to their runs and only then are the
entries acknowledged.

One bad entry never stops the others:
- an entry whose MAC does not match its run's event key (runs/event_keys.py) is
  not the run's runner's: it goes to the dead-letter stream and changes nothing;
- an authentic entry that cannot be stored (not JSON, not an event, a seq or type
  out of range, or text PostgreSQL refuses such as U+0000 or a lone surrogate)
  goes to the dead-letter stream too, and its run is failed (`event_rejected`):
  a run whose log has a hole must not end as if nothing happened;
- the database refusing a batch (its one transaction) is retried run by run, and
  a run refused alone event by event, so only the event at fault is set aside.
The ingester does not rewrite an event to make it storable: the runner makes the
text it produces storable at its source, and what it signed is stored as is or not
at all.

Events of a run that already ended are stored only below its terminal event (they
were sent before the end but drained after it, e.g. after an ingester crash);
nothing follows a terminal event. A run's status changes only through events stored
now: a duplicate seq (already stored) changes nothing.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Final

import redis
from django.db import DataError, IntegrityError, transaction

from runner.protocol import RECORD_FIELD, TERMINAL_TYPES
from runs import ingest_sql, ingest_stream, node_records, reaper
from runs.event_keys import entry_authentic, record_authentic
from runs.lifecycle import apply_event, do_finish_runs, tell_started
from runs.models import FINAL_STATUSES, Run, RunEvent

log = logging.getLogger(__name__)

Entry = ingest_stream.Entry

# RunEvent.seq is a PositiveIntegerField: PostgreSQL's integer.
MAX_SEQ: Final = 2**31 - 1
MAX_TYPE_LENGTH: Final = RunEvent._meta.get_field("type").max_length or 32
# An event that cannot be stored: PostgreSQL refuses its data (DataError: U+0000, a
# lone surrogate), the driver cannot encode its text (UnicodeError, a ValueError), or
# applying it fails on a field of the wrong type or value (TypeError, ValueError: an
# impossible date). Anything else (the database is down) is not the entry's fault
# and is raised: the batch stays pending and is retried.
REFUSED: Final = (DataError, IntegrityError, ValueError, TypeError)


@dataclass(frozen=True)
class Accepted:
    entry_id: bytes
    fields: dict[bytes, bytes]
    run_id: str
    event: dict[str, Any]


@dataclass(frozen=True)
class Rejected:
    entry_id: bytes
    fields: dict[bytes, bytes]
    reason: str
    run_id: str | None = None  # set when the entry is authentic: its run is failed


@dataclass
class Outcome:
    stored: int = 0
    rejected: list[Rejected] = field(default_factory=list)

    @property
    def runs_to_fail(self) -> list[str]:
        return list(dict.fromkeys(r.run_id for r in self.rejected if r.run_id is not None))


def check_record_entry(entry: Entry) -> node_records.RecordRow | Rejected:
    """A node record entry's row, or why it cannot be stored (its run goes on: a record
    is a view of the run, never its cause)."""
    entry_id, fields = entry
    run_id = _run_id(fields.get(b"run"))
    encoded, mac = fields.get(RECORD_FIELD.encode()), fields.get(b"mac")
    if run_id is None or encoded is None:
        return Rejected(entry_id, fields, "malformed_entry")
    if mac is None or not record_authentic(run_id, encoded, mac):
        return Rejected(entry_id, fields, "bad_mac")
    row = node_records.decode(run_id, encoded)
    return Rejected(entry_id, fields, row) if isinstance(row, str) else row


def check_entry(entry: Entry) -> Accepted | Rejected:
    """An entry's run and event, or why it cannot be stored."""
    entry_id, fields = entry
    run_id = _run_id(fields.get(b"run"))
    encoded, mac = fields.get(b"e"), fields.get(b"mac")
    if run_id is None or encoded is None:
        return Rejected(entry_id, fields, "malformed_entry")
    if mac is None or not entry_authentic(run_id, encoded, mac):
        return Rejected(entry_id, fields, "bad_mac")
    problem, event = _decode(encoded)
    if problem:
        return Rejected(entry_id, fields, problem, run_id)
    return Accepted(entry_id, fields, run_id, event)


def _run_id(raw: bytes | None) -> str | None:
    try:
        return str(uuid.UUID(raw.decode("ascii"))) if raw is not None else None
    except (UnicodeDecodeError, ValueError):
        return None


def _decode(encoded: bytes) -> tuple[str, dict[str, Any]]:
    """('', event), or (reason, {}) for what no database could store as an event."""
    try:
        event = json.loads(encoded)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "invalid_json", {}
    if not isinstance(event, dict):
        return "not_an_event", {}
    seq, kind = event.get("seq"), event.get("type")
    if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
        return "invalid_seq", {}
    if not isinstance(kind, str) or not 0 < len(kind) <= MAX_TYPE_LENGTH:
        return "invalid_type", {}
    return "", event


def store_entries(entries: list[Entry]) -> Outcome:
    """Store the storable events of `entries` and apply them to their runs."""
    outcome = Outcome()
    accepted: list[Accepted] = []
    records: list[tuple[Entry, node_records.RecordRow]] = []
    for entry in entries:
        if RECORD_FIELD.encode() in entry[1]:
            row = check_record_entry(entry)
            if isinstance(row, Rejected):
                outcome.rejected.append(row)
            else:
                records.append((entry, row))
            continue
        checked = check_entry(entry)
        if isinstance(checked, Accepted):
            accepted.append(checked)
        else:
            outcome.rejected.append(checked)
    by_run = _by_run(accepted, outcome.rejected)
    try:
        # One transaction (one durable commit) for the whole batch, whatever its
        # runs: commits, not rows, are what a busy ingester pays for. Records first:
        # when a run's ending is stored, the records sent before it are too.
        with transaction.atomic():
            node_records.insert([row for _entry, row in records])
            outcome.stored = _store_runs(by_run)
        return outcome
    except REFUSED:
        log.warning("the database refused a batch of %d events and %d records; storing "
                    "the records, then run by run", len(accepted), len(records))
    _store_records(records, outcome)
    try:
        with transaction.atomic():
            outcome.stored = _store_runs(by_run)
    except REFUSED:
        for run_id, items in by_run.items():
            outcome.stored += _store_run_isolated(run_id, items, outcome)
    return outcome


def _store_records(records: list[tuple[Entry, node_records.RecordRow]],
                   outcome: Outcome) -> None:
    """The records of runs that exist; the ones the database refuses are dead-lettered,
    their runs left alone."""
    refused = node_records.store([row for _entry, row in records], REFUSED)
    for entry, row in records:
        if row in refused:
            outcome.rejected.append(Rejected(entry[0], entry[1], "refused_by_database"))


def _by_run(accepted: list[Accepted], rejected: list[Rejected]) -> dict[str, list[Accepted]]:
    """Accepted entries per run, without those that follow a rejected one of their run
    (the run is failed; its end comes from the gateway)."""
    cut = {r.run_id: r.entry_id for r in rejected if r.run_id is not None}
    by_run: dict[str, list[Accepted]] = defaultdict(list)
    for item in accepted:
        if item.run_id in cut and _id_key(item.entry_id) > _id_key(cut[item.run_id]):
            continue
        by_run[item.run_id].append(item)
    return by_run


def _id_key(entry_id: bytes) -> tuple[int, ...]:
    return tuple(int(part) for part in entry_id.split(b"-"))


def _store_runs(by_run: dict[str, list[Accepted]]) -> int:
    """The batch in a few statements (runs.ingest_sql): lock the runs and read what
    they stored, insert the new events, update the changed runs, end the ended ones."""
    locked = ingest_sql.lock_runs(by_run, (i.event["seq"] for items in by_run.values()
                                           for i in items))
    rows: list[tuple[Run, dict[str, Any]]] = []
    changed: list[Run] = []
    started: list[Run] = []
    ended: list[Run] = []
    for run_id, items in by_run.items():
        entry = locked.get(uuid.UUID(run_id))
        if entry is None:
            continue  # pruned or unknown: nothing to store it with
        run = entry.run
        events = _new_events(run, [i.event for i in items], entry)
        was_final, was_queued = run.status in FINAL_STATUSES, run.status == "queued"
        if _apply(run, events):
            changed.append(run)
        rows += [(run, e) for e in events]
        if run.status in FINAL_STATUSES and not was_final:
            ended.append(run)
        elif was_queued and run.status != "queued":
            started.append(run)
    ingest_sql.insert_events(rows)
    ingest_sql.update_runs(changed)
    # An ending in the ingest stream was written with its slot freed: by the runner's
    # sink in the same MULTI (runner/sink.py), by a cancel before pickup right after.
    do_finish_runs(ended, free_slots=False)
    tell_started(started)
    return len(rows)


def _new_events(run: Run, events: list[dict[str, Any]],
                locked: ingest_sql.LockedRun) -> list[dict[str, Any]]:
    """The events to store now, in seq order: not stored yet, once each, and for an
    ended run only non-terminal events below its terminal one."""
    fresh: dict[int, dict[str, Any]] = {}
    for event in events:
        if event["seq"] not in locked.stored:
            fresh.setdefault(event["seq"], event)
    if run.status in FINAL_STATUSES:
        end = -1 if locked.terminal_seq is None else locked.terminal_seq
        fresh = {seq: e for seq, e in fresh.items()
                 if seq < end and e["type"] not in TERMINAL_TYPES}
    return [fresh[seq] for seq in sorted(fresh)]


def _apply(run: Run, events: list[dict[str, Any]]) -> bool:
    """Apply the events to the run in memory; True when it changed."""
    changed = False
    for event in events:
        changed = bool(apply_event(run, event)) or changed
    return changed


def _store_run_isolated(run_id: str, items: list[Accepted], outcome: Outcome) -> int:
    """One run in its own transaction; if refused, its events one by one, so the one
    at fault is set aside (and the run failed) and those before it are kept."""
    try:
        with transaction.atomic():
            return _store_runs({run_id: items})
    except REFUSED:
        pass
    stored = 0
    for item in sorted(items, key=lambda i: i.event["seq"]):
        try:
            with transaction.atomic():
                stored += _store_runs({run_id: [item]})
        except REFUSED as exc:
            log.warning("run %s: the database refused event entry %s (%s)", run_id,
                        item.entry_id.decode(), type(exc).__name__)
            outcome.rejected.append(Rejected(item.entry_id, item.fields,
                                             "refused_by_database", run_id))
            break  # what follows would leave a hole: the run is failed instead
    return stored


def process(client: redis.Redis, entries: list[Entry]) -> int:
    """Store a batch, fail the runs of its refused authentic entries, dead-letter the
    refused entries and acknowledge the batch — in that order, so a crash in between
    only repeats work that is idempotent."""
    outcome = store_entries(entries)
    for run_id in outcome.runs_to_fail:
        reaper.fail_run(client, run_id, reaper.EVENT_REJECTED)
    if outcome.rejected:
        reasons = Counter(r.reason for r in outcome.rejected)
        log.warning("dead-lettered %d event entries (%s); failed runs: %s",
                    len(outcome.rejected), ", ".join(f"{k}: {n}" for k, n in reasons.items()),
                    ", ".join(outcome.runs_to_fail) or "none")
    ingest_stream.acknowledge(client, entries,
                              [(r.entry_id, r.fields, r.reason) for r in outcome.rejected])
    return len(entries)


def drain_once(client: redis.Redis, consumer: str, block_ms: int = 100) -> int:
    """One batch of new entries; returns how many were handled."""
    entries = ingest_stream.read_new(client, consumer, block_ms)
    return process(client, entries) if entries else 0


def drain_claimed(client: redis.Redis, consumer: str, min_idle_ms: int) -> int:
    """Take over and handle the pending entries idle that long (0: all of them)."""
    return sum(process(client, batch)
               for batch in ingest_stream.claimed_batches(client, consumer, min_idle_ms))


def catch_up_and_reap(client: redis.Redis, consumer: str, candidates: list[str]) -> int:
    """The periodic pass: store what was sent (abandoned entries too), trim what is
    committed, then reap the `candidates` (runs whose lease was already gone before
    this pass) that are still active and have no entry left on the way."""
    drain_claimed(client, consumer, ingest_stream.IDLE_CLAIM_MS)
    while drain_once(client, consumer, block_ms=1):
        pass
    ingest_stream.trim_committed(client)
    if not candidates:
        return 0
    undrained = ingest_stream.undrained_runs(client)
    if undrained is None:
        return 0  # too much on the way to tell: next pass
    return reaper.reap(client, [run for run in candidates if run not in undrained])
