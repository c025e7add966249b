"""ASGI entry point of the internal listener: ``uvicorn kionga.internal_asgi:application``.

It runs as its own process with kionga.settings_internal (another ROOT_URLCONF),
so the two listeners can never share routes by accident.
"""

import os

from django.core.asgi import get_asgi_application

# Forced, not setdefault: an inherited DJANGO_SETTINGS_MODULE=kionga.settings would
# silently expose the whole public API (and admin) on the internal port.
os.environ["DJANGO_SETTINGS_MODULE"] = "kionga.settings_internal"

application = get_asgi_application()
