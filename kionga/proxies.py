"""Who the client is: the peer of the connection, or what a trusted proxy says it is.

A proxy in front of the gateway connects for everyone, so without its X-Forwarded-For
every person would share its address (and its sign-in lockouts and throttles). A
client, on the other hand, can send any X-Forwarded-For it likes. So the header is
read only from the peers named in KIONGA_TRUSTED_PROXIES (addresses or networks;
empty: trust none), by uvicorn's own ProxyHeadersMiddleware wrapped around the public
listener's ASGI app (kionga.asgi): it takes the right-most address not itself a
trusted proxy, the one the last trusted proxy saw, so a client cannot name another
address in front of it. The listeners run with `--no-proxy-headers` (Procfile), so
uvicorn's own default (trust 127.0.0.1) adds nothing to this setting.

Everything that asks for a client's address (django-axes, the sign-in slowdown, the
API's anonymous throttle) asks client_address(), which is REMOTE_ADDR after that.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from django.http import HttpRequest
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from runner.env import EnvError

SETTING = "KIONGA_TRUSTED_PROXIES"


def trusted_proxies(entries: Iterable[str]) -> list[str]:
    """The setting's entries as networks ("10.0.0.5" is "10.0.0.5/32"); a start with
    anything else (a host name, "*") is refused: uvicorn would silently trust nothing
    for a name, and "*" would let every client pick its address."""
    networks: list[str] = []
    for entry in entries:
        try:
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise EnvError(f"{SETTING} must list IP addresses or networks (CIDR), "
                           f"got {entry!r}") from None
    return networks


def behind_trusted_proxies(app: Any, networks: list[str]) -> Any:
    """`app` taking the client from X-Forwarded-For (and the scheme from
    X-Forwarded-Proto) when the peer is in `networks`; `app` itself when none."""
    if not networks:
        return app
    return ProxyHeadersMiddleware(app, trusted_hosts=networks)


def client_address(request: HttpRequest) -> str | None:
    # REMOTE_ADDR only: the listener already replaced it from a trusted proxy's header;
    # reading X-Forwarded-For here would let anyone pick an address.
    return request.META.get("REMOTE_ADDR")
