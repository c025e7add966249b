"""WSGI entry point (management tooling, debugging); production uses the ASGI apps."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kionga.settings")

application = get_wsgi_application()
