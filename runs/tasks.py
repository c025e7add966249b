"""Celery tasks of the gateway: thin wrappers around plain functions."""

from __future__ import annotations

from celery import shared_task

from runs.prune import prune_runs


@shared_task(name="runs.prune_runs")
def prune_runs_task() -> int:
    return prune_runs()
