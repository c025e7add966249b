"""ASGI entry point of the public listener: ``uvicorn kionga.asgi:application``."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kionga.settings")

application = get_asgi_application()
