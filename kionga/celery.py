"""Celery application of the gateway (dispatch, event draining, beat jobs).

The runner has its own worker entry point under runner/ and never imports this.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kionga.settings")

app = Celery("kionga")
# Lazy: settings are read when Celery first needs them, not at import time.
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
