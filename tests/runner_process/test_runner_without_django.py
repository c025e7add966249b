"""The runner never loads Django, even when the environment names Django settings.

Celery switches its Django fix-up on whenever DJANGO_SETTINGS_MODULE is set (a shared
.env, a process manager's inherited variables): it would set Django up in every pool
process and close database connections around every task of a runner that has no
database.
"""

from __future__ import annotations

import subprocess
import sys

from tests.runner_process.runner_kit import ROOT, free_port, worker_env

PROBE = """
import sys
from celery import signals
import runner.celery_app as runner_app
signals.import_modules.send(sender=runner_app.app)
signals.worker_init.send(sender=None)
# kombu imports django.utils.functional when Django is installed; setting Django up
# would load its database layer and the gateway's settings.
print(sorted(m for m in sys.modules if m.startswith(("django.db", "django.apps", "kionga"))))
"""


def test_the_runner_app_leaves_django_unloaded_with_django_settings_in_its_environment(
) -> None:
    env = worker_env(free_port(), DJANGO_SETTINGS_MODULE="kionga.settings")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
