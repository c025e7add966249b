"""A trigger deleted (by an editor, or with its agent) takes beat's row with it."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete
from django.dispatch import receiver
from django_celery_beat.models import PeriodicTask

from triggers.models import Trigger


@receiver(post_delete, sender=Trigger, dispatch_uid="triggers.drop_periodic_task")
def drop_periodic_task(sender: type[Trigger], instance: Trigger, **kwargs: Any) -> None:
    if instance.periodic_task_id is not None:
        PeriodicTask.objects.filter(pk=instance.periodic_task_id).delete()
