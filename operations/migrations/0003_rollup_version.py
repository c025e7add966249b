"""The version that served an agent's turns becomes part of a rollup's key (a canary's
metrics beside the current version's), and the rollups of the metrics' longest window
are rebuilt from the runs with it (also the backfill of an install that had none)."""

from django.db import migrations, models
from django.utils import timezone


def rebuild(apps, schema_editor):
    from operations.rollups import KEEP, do_rebuild

    do_rebuild(timezone.now() - KEEP)


class Migration(migrations.Migration):

    dependencies = [
        ('operations', '0002_backfill'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='rollup',
            name='rollup_scope_slot',
        ),
        migrations.AddField(
            model_name='rollup',
            name='version_id',
            field=models.CharField(db_default='', default='', max_length=64),
        ),
        migrations.AddConstraint(
            model_name='rollup',
            constraint=models.UniqueConstraint(fields=('project', 'agent', 'slot', 'version_id'), name='rollup_scope_slot_version', nulls_distinct=False),
        ),
        migrations.RunPython(rebuild, migrations.RunPython.noop),
    ]
