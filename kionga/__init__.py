"""Kionga gateway: Django project package and the platform app.

The Celery app is imported here (the Django convention) so ``@shared_task``
binds to it. Guarded: importing it needs Celery and Django settings, and code
that only wants a platform module must not fail without them.
"""

try:
    from kionga.celery import app as celery_app
except ImportError:  # pragma: no cover - only without Celery installed
    celery_app = None  # type: ignore[assignment]

__all__ = ["celery_app"]
