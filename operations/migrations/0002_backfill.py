"""Rollups of the runs stored before they existed (the metrics' longest window and a day).

Room on each page for the rows' updates (fillfactor): a slot's row is rewritten as each
of its runs ends, in place (HOT) when the page has room.
"""

from django.db import migrations
from django.utils import timezone


def backfill(apps, schema_editor):
    from operations.rollups import KEEP, do_rebuild

    schema_editor.execute("ALTER TABLE operations_rollup SET (fillfactor = 70)")
    do_rebuild(timezone.now() - KEEP)


class Migration(migrations.Migration):

    dependencies = [
        ('operations', '0001_initial'),
        ('runs', '0003_run_agent_run_latency_ms_run_run_agent_created_and_more'),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
