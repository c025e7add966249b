"""Egress policy for the URLs staff configure (models, functions, API connections).

The gateway calls those URLs from inside the deployment, so a URL (or a DNS name
that later resolves elsewhere) must not reach what only the deployment should:

- Addresses that are not globally routable (loopback, link-local incl. cloud
  metadata 169.254.169.254, private and shared ranges, unique-local IPv6, ...) are
  refused unless KIONGA_EGRESS_ALLOW lists the address's network or the host name.
- The platform's own services (the internal listener, PostgreSQL, Redis, the runner:
  host and port from their settings) are refused even inside an allowed network,
  unless KIONGA_EGRESS_ALLOW names that exact `host:port`.

The check runs at connect time on the addresses the name resolved to, and the
connection goes to a checked address (DNS rebinding cannot swap it afterwards);
TLS still verifies the URL's host name. `resolve_checked` does both for the two
clients: kionga.upstream_sessions (aiohttp, the resource calls) and
`guarded_async_transport` (httpx, for the mcp client, which takes only httpx).
Callers map every failure, refusal included, to the same message (kionga.upstream),
so the policy is no port-scan oracle.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class EgressRefused(OSError):
    """The policy refused the destination: an OSError, as any other failure to connect
    (each client maps it like one: aiohttp to ClientConnectorError, our httpx backend
    to httpcore.ConnectError)."""


@dataclass(frozen=True)
class Policy:
    allow_networks: tuple[Network, ...]
    allow_hosts: frozenset[str]
    allow_endpoints: frozenset[tuple[str, int]]
    platform_endpoints: frozenset[tuple[str, int]]

    def check(self, host: str, port: int, address: Address) -> None:
        """Raise EgressRefused unless `host`:`port`, resolved to `address`, may be called."""
        host = host.lower().rstrip(".")
        ip = address
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            ip = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
        endpoints = {(host, port), (str(ip), port)}
        if endpoints & self.platform_endpoints and not endpoints & self.allow_endpoints:
            raise EgressRefused(f"{host}:{port} is a platform service")
        if ip.is_global or host in self.allow_hosts:
            return
        if any(ip in network for network in self.allow_networks):
            return
        raise EgressRefused(f"{ip} is not a public address")


def parse_allow(entries: Iterable[str]) -> tuple[tuple[Network, ...], frozenset[str],
                                                  frozenset[tuple[str, int]]]:
    """KIONGA_EGRESS_ALLOW: CIDRs or addresses, host names, or `host:port`. ValueError
    names the first entry that is none of them."""
    networks: list[Network] = []
    hosts: set[str] = set()
    endpoints: set[tuple[str, int]] = set()
    for raw in entries:
        entry = raw.strip().lower()
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
            continue
        except ValueError:
            pass
        endpoint = _endpoint(entry)
        if endpoint is not None:
            endpoints.add(endpoint)
        elif entry and all(part.replace("-", "").isalnum() for part in entry.split(".")):
            hosts.add(entry)
        else:
            raise ValueError(f"KIONGA_EGRESS_ALLOW: {raw!r} is not a host, address, CIDR "
                             f"or host:port")
    return tuple(networks), frozenset(hosts), frozenset(endpoints)


def _endpoint(entry: str) -> tuple[str, int] | None:
    """("host", port) of `host:port` or `[v6]:port`, else None."""
    if entry.startswith("["):
        host, sep, port = entry[1:].partition("]:")
    else:
        host, sep, port = entry.partition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host, int(port)


def platform_endpoints() -> frozenset[tuple[str, int]]:
    """host:port of the services only the platform may call, from their settings."""
    return _platform_endpoints(*_platform_settings())


def _platform_settings() -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    urls = (settings.KIONGA_AGENT_DESIGNER_CALLBACK_URL, settings.REDIS_URL,
            settings.KIONGA_AGENT_DESIGNER_RUNNER_URL)
    databases = tuple((str(db.get("HOST") or ""), str(db.get("PORT") or ""))
                      for db in settings.DATABASES.values())
    return urls, databases


def _platform_endpoints(urls: tuple[str, ...],
                        databases: tuple[tuple[str, str], ...]) -> frozenset[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for url in urls:
        parts = urlsplit(url) if url else None
        if parts and parts.hostname:
            default = {"https": 443, "redis": 6379, "rediss": 6379}.get(parts.scheme, 80)
            found.add((parts.hostname.lower(), parts.port or default))
    for host, port in databases:
        if host:
            found.add((host.lower(), int(port or 5432)))
    return frozenset(found)


def current_policy() -> Policy:
    # Read on each call: tests and operators change settings at run time. Built once
    # per distinct value of its settings (each resource call asks for it).
    return _policy(tuple(settings.KIONGA_EGRESS_ALLOW), *_platform_settings())


@functools.lru_cache(maxsize=16)
def _policy(allow: tuple[str, ...], urls: tuple[str, ...],
            databases: tuple[tuple[str, str], ...]) -> Policy:
    networks, hosts, endpoints = parse_allow(allow)
    return Policy(networks, hosts, endpoints, _platform_endpoints(urls, databases))


async def resolve_checked(policy: Policy, host: str, port: int) -> list[Address]:
    """The addresses `host` resolves to (without blocking the event loop), each one
    checked: one refused address refuses the name. OSError when it does not resolve
    or is refused."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM)
    except UnicodeError as exc:  # a name IDNA cannot encode
        raise OSError(f"name resolution failed: {exc}") from None
    addresses = list(dict.fromkeys(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))
    for address in addresses:
        policy.check(host, port, address)
    return addresses


class AsyncGuardedBackend(httpcore.AnyIOBackend):
    """Connects to a checked address of the host (resolve_checked)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None
                          ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await resolve_checked(self.policy, host, port)
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        return await super().connect_tcp(str(addresses[0]), port, timeout=timeout,
                                         local_address=local_address,
                                         socket_options=socket_options)


@functools.cache
def ssl_context() -> ssl.SSLContext:
    # Built once per process: loading the CA bundle costs milliseconds and ~1 MB, which
    # a thousand calls in flight must not each pay.
    return httpx.create_ssl_context()


def guarded_async_transport() -> httpx.AsyncHTTPTransport:
    """An httpx transport (for httpx.AsyncClient) whose connections pass the policy."""
    transport = httpx.AsyncHTTPTransport(verify=ssl_context())  # no CA bundle load per call
    # httpx has no public hook for the network backend; its pool is httpcore's, whose
    # constructor takes one. Same SSL defaults as AsyncHTTPTransport's own pool.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=ssl_context(), network_backend=AsyncGuardedBackend(current_policy()),
    )
    return transport


LOCAL_NAMES = ("localhost", "localhost.localdomain")


def configured_url_refusal(url: str) -> str | None:
    """Why a URL a project admin (or staff) configures is refused now, or None.

    The same policy as at connect time, on what can be known without a DNS lookup (a
    request must not wait on one, and a name may resolve elsewhere later anyway): an
    http(s) URL with a host; an address the policy refuses; a platform service's
    host:port; a local name. Every other name is checked again at each connection.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "Enter a valid http or https URL."
    host = (parts.hostname or "").lower().rstrip(".")
    if parts.scheme not in ("http", "https") or not host:
        return "Enter a valid http or https URL."
    if parts.username is not None or parts.password is not None:
        return "Put credentials in the secret, not in the URL."
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        address: Address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if host in LOCAL_NAMES or host.endswith(".localhost"):
            address = ipaddress.ip_address("127.0.0.1")
        else:
            address = ipaddress.ip_address("8.8.8.8")  # stands for "some public address"
    try:
        current_policy().check(host, port, address)
    except EgressRefused:
        return ("The egress policy refuses this destination (a private, local or platform "
                "address); ask the operators to allow it (KIONGA_EGRESS_ALLOW).")
    return None
