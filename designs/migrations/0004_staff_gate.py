"""Design.require_evaluation_by_staff: the gate staff switched on
(docs/decisions/staff-gates-need-the-operators-judge.md).

Existing gates: one whose latest `design.require_evaluation_changed` audit event is a
non-staff user switching it on stays the project's. Any other was switched on in the
admin (the only way before project editors could) or with the design's creation (not
audited): it becomes a staff gate, the safe side — staff can hand it back by switching
it off, and the project on again.
"""

from typing import Any

from django.conf import settings
from django.db import migrations, models


def backfill(apps: Any, schema_editor: Any) -> None:
    Design = apps.get_model("designs", "Design")
    AuditEvent = apps.get_model("kionga", "AuditEvent")
    for design in Design.objects.filter(require_evaluation=True).iterator():
        last = (AuditEvent.objects.filter(action="design.require_evaluation_changed",
                                          target_type="design", target_id=str(design.pk))
                .select_related("actor").order_by("-id").first())
        by_project = (last is not None and last.details.get("require_evaluation") is True
                      and last.actor is not None and not last.actor.is_staff)
        if not by_project:
            Design.objects.filter(pk=design.pk).update(require_evaluation_by_staff=True)


class Migration(migrations.Migration):

    dependencies = [
        ('designs', '0003_versions'),
        ('kionga', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='design',
            name='require_evaluation_by_staff',
            field=models.BooleanField(default=False, verbose_name='gate set by staff'),
        ),
        migrations.AddConstraint(
            model_name='design',
            constraint=models.CheckConstraint(condition=models.Q(('require_evaluation', True), ('require_evaluation_by_staff', False), _connector='OR'), name='design_staff_gate_is_on'),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
