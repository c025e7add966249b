from typing import Any

from django.db import migrations, models

from approvals import reasons


def backfill(apps: Any, schema_editor: Any) -> None:
    """Requests that ended before reasons were stored get one (the run's end reason and
    the exact deadline were not kept for them: the general sentence)."""
    requests = apps.get_model("approvals", "ApprovalRequest").objects.filter(reason="")
    requests.filter(status="expired").update(reason=reasons.EARLIER_EXPIRED)
    requests.filter(status="cancelled").update(reason=reasons.EARLIER_CANCELLED)
    decided = requests.filter(status__in=["approved", "rejected"]).select_related("decided_by")
    for request in decided.iterator():
        who = request.decided_by.username if request.decided_by else "someone"
        decision = "approve" if request.status == "approved" else "reject"
        request.reason = reasons.decided(decision, who, request.comment)
        request.save(update_fields=["reason"])


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='approvalrequest',
            name='reason',
            field=models.TextField(blank=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
