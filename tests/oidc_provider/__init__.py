"""A real OpenID Connect provider for tests: django-oauth-toolkit's OIDC provider in a
tiny Django project of its own, served on loopback by ``python -m tests.oidc_provider``
(tests/oidc_peer.py starts it). Its people, their groups and its one client are set
through /control/ (a bearer secret), so a test plays the company's identity admin."""
