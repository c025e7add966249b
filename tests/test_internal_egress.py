"""The egress policy for staff-configured URLs: non-public addresses and the platform's
own services are refused unless KIONGA_EGRESS_ALLOW says otherwise, on the address
the name resolved to; every failure to reach an upstream has the same message."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import given
from hypothesis import strategies as st

from kionga import egress
from kionga.models import Project
from kionga.resource_models import ApiConnection, Function
from tests.internal_helpers import BASE, closed_port_url, json_answer, run_client, start_run
from tests.internal_helpers import upstream as serve

pytestmark = pytest.mark.urls("kionga.internal_urls")

MESSAGE = "Function 'hook' cannot be reached."
# The resources these runs' graphs name (a run may call only those); made after the start.
SCOPE = {"function": ["hook"], "connection": ["api"]}


def invoke(raw: str) -> Any:
    return run_client(raw).post(BASE + "functions/hook/invoke", {"input": 1}, format="json")


def hook(project: Project, url: str) -> None:
    Function.objects.update_or_create(project=project, key="hook", defaults={"url": url})


@contextmanager
def silent_peer() -> Iterator[str]:
    """Accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.allow_output  # failures are logged (without URLs)
def test_it_refuses_loopback_unless_allowed(carol: User, acme: Project, settings: Any) -> None:
    _, raw = start_run(carol, acme, resources=SCOPE)
    with serve(lambda *_: json_answer(200, {"ok": True})) as (url, seen):
        hook(acme, url + "/hook")
        assert invoke(raw).json() == {"output": {"ok": True}}  # allowed in tests
        for refusing in ([], ["10.0.0.0/8"], ["example.org"]):
            settings.KIONGA_EGRESS_ALLOW = refusing
            response = invoke(raw)
            assert response.status_code == 503, response.content
            assert response.json()["error"] == {"code": "resource_unavailable",
                                                "message": MESSAGE, "details": {}}
        settings.KIONGA_EGRESS_ALLOW = ["localhost"]  # a name allows what it resolves to
        hook(acme, url.replace("127.0.0.1", "localhost") + "/hook")
        assert invoke(raw).status_code == 200
    assert len(seen) == 2  # the refused calls never connected


@pytest.mark.allow_output
def test_it_gives_one_message_whatever_the_failure(
    carol: User, acme: Project, settings: Any, monkeypatch: Any
) -> None:
    from runs.internal import actions

    monkeypatch.setattr(actions, "CALL_TIMEOUT", 0.2)
    _, raw = start_run(carol, acme, resources=SCOPE)
    db = settings.DATABASES["default"]
    targets = {
        "refused": closed_port_url() + "/hook",
        "dns": "http://no-such-host.invalid/hook",
        "policy": "http://169.254.169.254/latest/meta-data",
        "database": f"http://{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/",
        "internal listener": settings.KIONGA_AGENT_DESIGNER_CALLBACK_URL,
        "bad url": "http://[::1/hook",
    }
    with silent_peer() as silent:
        targets["timeout"] = silent
        for kind, url in targets.items():
            hook(acme, url)
            response = invoke(raw)
            assert (response.status_code, response.json()["error"]["message"]) == (
                503, MESSAGE), kind


@pytest.mark.allow_output
def test_it_checks_the_address_a_name_resolves_to_and_connects_there(
    carol: User, acme: Project, settings: Any, monkeypatch: Any
) -> None:
    real = socket.getaddrinfo
    answers = {"rebind.test": "127.0.0.1"}

    def resolve(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            return real(answers[host], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(egress.socket, "getaddrinfo", resolve)
    _, raw = start_run(carol, acme, resources=SCOPE)
    with serve(lambda *_: json_answer(200, {"ok": 1})) as (url, seen):
        port = url.rsplit(":", 1)[1]
        hook(acme, f"http://rebind.test:{port}/hook")
        # The name exists only in our resolver: the call went to the checked address.
        assert invoke(raw).json() == {"output": {"ok": 1}}
        settings.KIONGA_EGRESS_ALLOW = []
        assert invoke(raw).status_code == 503
        answers["rebind.test"] = "10.1.2.3"
        settings.KIONGA_EGRESS_ALLOW = ["127.0.0.1"]
        assert invoke(raw).status_code == 503
    assert len(seen) == 1


@pytest.mark.allow_output
def test_it_applies_to_api_connections(carol: User, acme: Project, settings: Any) -> None:
    _, raw = start_run(carol, acme, resources=SCOPE)
    with serve(lambda *_: json_answer(200, {})) as (url, seen):
        ApiConnection.objects.create(project=acme, key="api", base_url=url)
        settings.KIONGA_EGRESS_ALLOW = []
        response = run_client(raw).post(BASE + "agent-api-connections/api/invoke",
                                        {"method": "GET", "path": "/x"}, format="json")
    assert response.json()["error"] == {
        "code": "resource_unavailable", "message": "API connection 'api' cannot be reached.",
        "details": {}}
    assert seen == []


ipv4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
ipv6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)


@given(address=st.one_of(ipv4, ipv6))
def test_it_lets_through_only_public_addresses_by_default(address: Any) -> None:
    policy = egress.Policy((), frozenset(), frozenset(), frozenset())
    mapped = ipaddress.IPv6Address(f"::ffff:{address}") if address.version == 4 else address
    for candidate in (address, mapped):
        effective = candidate.ipv4_mapped or candidate if candidate.version == 6 else candidate
        try:
            policy.check("host.example", 443, candidate)
            allowed = True
        except egress.EgressRefused:
            allowed = False
        assert allowed == effective.is_global, candidate


def test_it_refuses_platform_services_even_in_an_allowed_network(settings: Any) -> None:
    settings.KIONGA_AGENT_DESIGNER_CALLBACK_URL = "http://10.0.0.5:8087/api/v1"
    networks, hosts, endpoints = egress.parse_allow(["10.0.0.0/8"])
    policy = egress.Policy(networks, hosts, endpoints, egress.platform_endpoints())
    policy.check("models.lan", 8000, ipaddress.ip_address("10.0.0.5"))
    with pytest.raises(egress.EgressRefused):
        policy.check("models.lan", 8087, ipaddress.ip_address("10.0.0.5"))
    networks, hosts, endpoints = egress.parse_allow(["10.0.0.0/8", "10.0.0.5:8087"])
    egress.Policy(networks, hosts, endpoints, egress.platform_endpoints()).check(
        "models.lan", 8087, ipaddress.ip_address("10.0.0.5"))


def test_it_refuses_a_malformed_allow_list() -> None:
    for bad in (["http://x"], ["a b"], ["10.0.0.0/33"]):
        with pytest.raises(ValueError, match="KIONGA_EGRESS_ALLOW"):
            egress.parse_allow(bad)
