"""Hot routes: the few requests an app serves as plain ASGI, ahead of Django.

Starting a run and opening its event stream are the product's hottest requests (every
run makes them); through Django's handler, middleware and DRF they cost most of the
gateway's CPU. An app registers a matcher here (from AppConfig.ready, so the platform
never imports an app); kionga.asgi asks the matchers before Django. A matcher returns a
handler only for the requests it fully serves (a bearer token, the usual body); the
handler may still hand the request to Django (`fallback`) before it has done anything.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
Handler = Callable[[Scope, Receive, Send, App], Awaitable[None]]
Matcher = Callable[[Scope], Handler | None]

_MATCHERS: list[Matcher] = []


def register(matcher: Matcher) -> None:
    if matcher not in _MATCHERS:
        _MATCHERS.append(matcher)


def match(scope: Scope) -> Handler | None:
    if scope["type"] != "http":
        return None
    for matcher in _MATCHERS:
        handler = matcher(scope)
        if handler is not None:
            return handler
    return None
