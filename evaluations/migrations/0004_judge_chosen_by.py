"""Evaluation.judge_chosen_by and judge_destination
(docs/decisions/staff-gates-need-the-operators-judge.md).

Existing rows: a `resource` judge was the project's choice. So was, before
docs/decisions/judge-model-names.md, a judge model naming one of the project's model
resources (the judge graph asked that resource then); counting those as the project's
may keep an operator-judged evaluation out of a staff gate (evaluate again), never the
reverse. The destination of an earlier evaluation's judge is not known.
"""

from typing import Any

from django.db import migrations, models


def backfill(apps: Any, schema_editor: Any) -> None:
    Evaluation = apps.get_model("evaluations", "Evaluation")
    ModelEndpoint = apps.get_model("kionga", "ModelEndpoint")
    Evaluation.objects.filter(judge_backend="resource").update(judge_chosen_by="project")
    Evaluation.objects.filter(judge_model__startswith="resource:").update(
        judge_chosen_by="project")
    keys = ModelEndpoint.objects.filter(project_id=models.OuterRef("project_id"),
                                        key=models.OuterRef("judge_model"))
    Evaluation.objects.filter(models.Exists(keys)).update(judge_chosen_by="project")


class Migration(migrations.Migration):

    dependencies = [
        ('evaluations', '0003_evaluation_design_cases'),
        ('kionga', '0002_resources'),
    ]

    operations = [
        migrations.AddField(
            model_name='evaluation',
            name='judge_chosen_by',
            field=models.CharField(choices=[('operator', 'operator'), ('project', 'project')], default='operator', max_length=16),
        ),
        migrations.AddField(
            model_name='evaluation',
            name='judge_destination',
            field=models.CharField(blank=True, max_length=300, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
