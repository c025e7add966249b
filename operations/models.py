"""Rollups: what the metrics read instead of a million runs (operations/rollups.py).

Per 150-second slot of creation time (`slot` = epoch seconds // 150): the runs of a
project (agent null) and the turns of an agent (agent set, one row per version that
served them) that ended, their counts,
tokens, cost and latency histogram (operations/histogram.py), one column per bucket
(`h0` ... `h241`): PostgreSQL sums 250 integer columns over 4,032 rows in tens of
milliseconds, an int[] unnested element by element takes several times longer.
A project's failures by error code have their own rows. The proxies at the end give
the admin its operations dashboards (operations/admin.py).
"""

from __future__ import annotations

from django.db import models

from deployments.models import Agent
from kionga.models import Project
from operations.histogram import BUCKETS


class Rollup(models.Model):
    # The unique constraint's index leads with project: no second index for it.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+",
                                db_index=False)
    agent = models.ForeignKey(Agent, null=True, on_delete=models.CASCADE, related_name="+")
    # An agent's rows are per version served (its runs' version_id: a canary's metrics
    # side by side with the current version's); a project's rows have "".
    version_id = models.CharField(max_length=64, default="", db_default="")
    slot = models.IntegerField()
    ended = models.IntegerField(default=0)
    completed = models.IntegerField(default=0)
    errors = models.IntegerField(default=0)
    tokens = models.BigIntegerField(default=0)
    cost = models.DecimalField(max_digits=18, decimal_places=6, default=0)

    class Meta:
        # Slot before version: a window's read is a range of slots of one scope.
        constraints = [models.UniqueConstraint(fields=["project", "agent", "slot", "version_id"],
                                               name="rollup_scope_slot_version",
                                               nulls_distinct=False)]

    def __str__(self) -> str:
        return f"rollup {self.project_id}/{self.agent_id or '-'}@{self.slot}"


# h0 ... h241: the latency histogram's bucket counts.
for _index in range(BUCKETS):
    # db_default: the end path's upsert names only the buckets its batch touched.
    Rollup.add_to_class(f"h{_index}", models.IntegerField(default=0, db_default=0))


class FailureRollup(models.Model):
    """A project's failed runs per slot and error code (the overview's failures by reason)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+",
                                db_index=False)
    slot = models.IntegerField()
    code = models.CharField(max_length=64)
    count = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "slot", "code"],
                                               name="failure_rollup_slot_code")]

    def __str__(self) -> str:
        return f"failures {self.project_id}@{self.slot} {self.code}"


class ProjectOperations(Project):
    """The admin's operations dashboard of a project (a page, no table)."""

    class Meta:
        proxy = True
        verbose_name = "project operations"
        verbose_name_plural = "operations by project"


class AgentOperations(Agent):
    """The admin's operations dashboard of a deployed agent (a page, no table)."""

    class Meta:
        proxy = True
        verbose_name = "agent operations"
        verbose_name_plural = "operations by agent"
