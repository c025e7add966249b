"""`python -m runner [extra celery worker options]`: the Procfile's runner line, spelled short.

Same as `celery -A runner.celery_app worker -Q runner --loglevel INFO`; concurrency
comes from KIONGA_DESIGNER_MAX_RUNS (runner.celery_app).
"""

from __future__ import annotations

import sys

from runner.celery_app import app
from runner.protocol import QUEUE


def main(argv: list[str]) -> None:
    app.worker_main(["worker", "-Q", QUEUE, "--loglevel", "INFO", "--without-gossip",
                     "--without-mingle", "--without-heartbeat", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
