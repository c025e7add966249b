"""Settings of the test identity provider (not the product's): SQLite in a temporary
folder, an RSA key made at each start, one OIDC client registered through /control/."""

from __future__ import annotations

import os

SECRET_KEY = os.environ.get("PROVIDER_SECRET_KEY", "test-provider-not-a-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "tests.oidc_provider.urls"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [os.path.join(os.path.dirname(__file__), "templates")],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3",
                         "NAME": os.environ["PROVIDER_DATABASE"]}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# Its own cookie name: the product and the provider share the host 127.0.0.1.
SESSION_COOKIE_NAME = "provider_session"
CSRF_COOKIE_NAME = "provider_csrftoken"
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": os.environ["PROVIDER_RSA_KEY"],
    "OAUTH2_VALIDATOR_CLASS": "tests.oidc_provider.validator.ClaimsValidator",
    "SCOPES": {"openid": "OpenID Connect", "email": "Email", "profile": "Profile",
               "groups": "Groups"},
    "PKCE_REQUIRED": True,
}
