"""runs.bills: model calls' tokens and cost, committed in groups on the listener's loop.

Concurrent bills of one run sum exactly; the bills that arrive while a write is under
way go in one statement (counted by a statement-level trigger on the runs table);
a write that fails is every caller's error.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection

from kionga.models import Project
from runs import bills
from runs.models import Run
from tests.internal_helpers import start_run

# The bills are written by kionga.pooled's threads, on connections of their own: the
# rows must be committed for them to see.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def update_statements() -> Iterator[None]:
    """Counts UPDATE statements on the runs table (one row of bills_counted per
    statement, whatever the rows it changes)."""
    table = Run._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bills_counted (at timestamptz DEFAULT now())")
        cursor.execute("CREATE FUNCTION bills_count() RETURNS trigger LANGUAGE plpgsql AS "
                       "$$ BEGIN INSERT INTO bills_counted DEFAULT VALUES; RETURN NULL; END $$")
        cursor.execute(f"CREATE TRIGGER bills_count AFTER UPDATE ON {table} "
                       "FOR EACH STATEMENT EXECUTE FUNCTION bills_count()")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER bills_count ON {table}")
            cursor.execute("DROP FUNCTION bills_count()")
            cursor.execute("DROP TABLE bills_counted")


def _statements() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM bills_counted")
        return int(cursor.fetchone()[0])


def _bill_all(bills_to_add: list[tuple[uuid.UUID, int, Decimal]]) -> None:
    async def all_at_once() -> None:
        await asyncio.gather(*(bills.add(*bill) for bill in bills_to_add))

    asyncio.run(all_at_once())


def _bills(runs: list[Run], count: int) -> list[tuple[uuid.UUID, int, Decimal]]:
    return [(runs[n % len(runs)].pk, n + 1, Decimal(n + 1) / 1000 + Decimal("0.000007"))
            for n in range(count)]


def test_concurrent_bills_of_one_run_sum_exactly(carol: User, acme: Project) -> None:
    first, _ = start_run(carol, acme)
    second, _ = start_run(carol, acme)
    wanted = _bills([first, second], 101)
    _bill_all(wanted)
    _bill_all(wanted)  # on top of what the rows hold
    for run in (first, second):
        run.refresh_from_db()
        mine = [bill for bill in wanted if bill[0] == run.pk]
        assert run.tokens == 2 * sum(tokens for _, tokens, _ in mine)
        assert run.cost == 2 * sum(cost for _, _, cost in mine)


def test_bills_arriving_together_are_one_statement(carol: User, acme: Project,
                                                   update_statements: None) -> None:
    runs = [start_run(carol, acme)[0] for _ in range(3)]
    _bill_all(_bills(runs, 60))
    # The first bill's write starts at once; the 59 others gather meanwhile: the next.
    assert _statements() <= 2
    assert sum(Run.objects.filter(pk__in=[r.pk for r in runs])
               .values_list("tokens", flat=True)) == sum(range(1, 61))


def test_a_failed_write_is_every_callers_error(carol: User, acme: Project) -> None:
    run, _ = start_run(carol, acme)
    _bill_all([(run.pk, 5, Decimal(1))])

    async def together() -> list[BaseException | None]:
        # Tokens below zero break the column's check: the group's one statement fails.
        results = await asyncio.gather(bills.add(run.pk, 6, Decimal(1)),
                                       bills.add(run.pk, -100, Decimal(1)),
                                       return_exceptions=True)
        return list(results)  # type: ignore[arg-type]

    assert all(isinstance(result, IntegrityError) for result in asyncio.run(together()))
    run.refresh_from_db()
    assert (run.tokens, run.cost) == (5, Decimal(1))
    _bill_all([(run.pk, 7, Decimal(2))])  # the next group is written as ever
    run.refresh_from_db()
    assert (run.tokens, run.cost) == (12, Decimal(3))
