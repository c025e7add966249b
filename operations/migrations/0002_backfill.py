"""Rollups of the runs stored before they existed (the metrics' longest window and a day):
made by 0003_rollup_version, which adds the version to the rows' key (the rebuild is
today's code, so it runs once the table has today's columns).

Room on each page for the rows' updates (fillfactor): a slot's row is rewritten as each
of its runs ends, in place (HOT) when the page has room.
"""

from django.db import migrations


def backfill(apps, schema_editor):
    schema_editor.execute("ALTER TABLE operations_rollup SET (fillfactor = 70)")


class Migration(migrations.Migration):

    dependencies = [
        ('operations', '0001_initial'),
        ('runs', '0003_run_agent_run_latency_ms_run_run_agent_created_and_more'),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
