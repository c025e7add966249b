"""ASGI entry point of the internal listener: ``uvicorn kionga.internal_asgi:application``.

It runs as its own process with kionga.settings_internal (another ROOT_URLCONF),
so the two listeners can never share routes by accident. Every route here is plain
request/response, so Django's WSGI handler serves them in worker threads (a2wsgi):
one thread hop per resource call instead of the several of Django's ASGI path.
"""

import os

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.wsgi import get_wsgi_application

from kionga.http_limits import RequestLimits

# Forced, not setdefault: an inherited DJANGO_SETTINGS_MODULE=kionga.settings would
# silently expose the whole public API (and admin) on the internal port.
os.environ["DJANGO_SETTINGS_MODULE"] = "kionga.settings_internal"

application = RequestLimits(
    WSGIMiddleware(get_wsgi_application(), workers=16),  # type: ignore[arg-type]
    settings.KIONGA_MAX_BODY_BYTES,
)
