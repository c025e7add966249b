"""``python -m tests.oidc_provider PORT``: migrate a fresh SQLite database and serve the
provider on 127.0.0.1:PORT (threaded) until killed. The environment names the database
file, the RSA key and the control secret (tests/oidc_peer.py sets them)."""

from __future__ import annotations

import os
import sys

import django
from django.core.management import call_command
from django.core.servers.basehttp import WSGIServer, run
from django.core.wsgi import get_wsgi_application


def main() -> None:
    port = int(sys.argv[1])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.oidc_provider.settings")
    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    run("127.0.0.1", port, get_wsgi_application(), threading=True, server_cls=WSGIServer)


if __name__ == "__main__":
    main()
