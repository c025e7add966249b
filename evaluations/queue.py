"""Enqueue the evaluations' gateway tasks (evaluations.tasks), by name: callers send
them from transaction.on_commit, so a task never runs before what it reads is stored."""

from __future__ import annotations

from kionga.celery import app as celery_app


def send_advance(evaluation_id: str, countdown: float | None = None) -> None:
    celery_app.send_task("evaluations.advance", args=[evaluation_id], countdown=countdown)


def send_settle(case_ids: list[int]) -> None:
    celery_app.send_task("evaluations.settle", args=[case_ids])
