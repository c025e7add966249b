"""Evaluation.design_cases: how many test cases the design had when the evaluation started.

Existing rows: a gate evaluation ran every case; another ran every case of its fixtures
revision when the design's fixtures are still at that revision and it ran as many as
they hold; otherwise the count is unknown (None), and the quality gate treats it as a
chosen subset, as it did before.
"""

from typing import Any

from django.db import migrations, models


def backfill(apps: Any, schema_editor: Any) -> None:
    Evaluation = apps.get_model("evaluations", "Evaluation")
    Fixtures = apps.get_model("evaluations", "Fixtures")
    current = {row.design_id: row for row in Fixtures.objects.all()}
    for evaluation in Evaluation.objects.all().iterator():
        ran = evaluation.cases.count()
        fixtures = current.get(evaluation.design_id)
        if evaluation.gate:
            evaluation.design_cases = ran
        elif fixtures is not None and fixtures.revision == evaluation.fixtures_revision:
            evaluation.design_cases = len(fixtures.cases)
        else:
            continue
        evaluation.save(update_fields=["design_cases"])


class Migration(migrations.Migration):

    dependencies = [
        ('evaluations', '0002_evaluations'),
    ]

    operations = [
        migrations.AddField(
            model_name='evaluation',
            name='design_cases',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
