"""Models of the evaluations app: a design's test cases (fixtures)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from designs.models import Design


class Fixtures(models.Model):
    """A design's test cases, one row per design, with their own revision.

    A PUT claims `revision + 1` with a conditional UPDATE (evaluations.fixtures), so of
    two PUTs of the same revision exactly one wins. A design without a row has
    revision 0 and no cases; the first PUT (revision 0) creates it.
    """

    design = models.OneToOneField(Design, on_delete=models.CASCADE, primary_key=True,
                                  related_name="fixtures")
    revision = models.PositiveIntegerField(default=1)
    cases = models.JSONField(default=list)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "fixtures"

    def __str__(self) -> str:
        return f"{self.design} fixtures r{self.revision}"
