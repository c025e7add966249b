"""X-Forwarded-For names the client only when a proxy of KIONGA_TRUSTED_PROXIES sent it
(kionga.proxies): over real HTTP, the Procfile's gateway line ignores the header from
an untrusted peer and takes the proxy's view of the client from a trusted one (a
client's own X-Forwarded-For in front of it changes nothing); the setting refuses what
is not an address or network; the API's anonymous throttle ignores the header too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from axes.models import AccessAttempt
from django.test import Client

from kionga import throttles
from kionga.proxies import trusted_proxies
from kionga.redis_client import sync_redis
from kionga.sign_in import forget_failures
from runner.env import EnvError
from tests.test_platform_request_limits import procfile_gateway

CLIENT, FRAMED = "203.0.113.9", "198.51.100.7"


@contextmanager
def gateway(trusted: str) -> Iterator[str]:
    """The Procfile's gateway command, as is, on a free port, trusting `trusted`."""
    with procfile_gateway(KIONGA_TRUSTED_PROXIES=trusted) as base:
        yield base


def failed_sign_in_address(base: str, forwarded_for: str) -> str:
    """Fail a sign-in with `forwarded_for` as X-Forwarded-For; the address it counted."""
    AccessAttempt.objects.all().delete()
    with httpx.Client(base_url=base, headers={"X-Forwarded-For": forwarded_for}) as browser:
        form = browser.get("/approvals/sign-in/").text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        assert token, form[:500]
        answer = browser.post("/approvals/sign-in/", data={
            "username": "nobody", "password": "wrong", "csrfmiddlewaretoken": token.group(1)})
        assert answer.status_code == 200, answer.text[:500]
    [attempt] = AccessAttempt.objects.all()
    return str(attempt.ip_address)


@pytest.fixture
def counted_addresses() -> Iterator[None]:
    yield
    for address in ("127.0.0.1", CLIENT, FRAMED):
        forget_failures(address)


@pytest.mark.django_db(transaction=True)  # the listener has its own connection
@pytest.mark.usefixtures("counted_addresses")
def test_the_listener_believes_x_forwarded_for_only_from_a_trusted_proxy() -> None:
    with gateway("") as base:  # the default: trust none
        assert failed_sign_in_address(base, CLIENT) == "127.0.0.1"
    with gateway("127.0.0.1") as base:
        assert failed_sign_in_address(base, CLIENT) == CLIENT
        # The proxy appends the peer it saw: what a client wrote before it is ignored.
        assert failed_sign_in_address(base, f"{FRAMED}, {CLIENT}") == CLIENT


def test_the_setting_takes_addresses_and_networks_only() -> None:
    assert trusted_proxies(["10.0.0.5", "10.1.0.0/16", "fd00::/8"]) == [
        "10.0.0.5/32", "10.1.0.0/16", "fd00::/8"]
    for bad in ("*", "proxy.example.com", "10.0.0.0/33"):
        with pytest.raises(EnvError, match="KIONGA_TRUSTED_PROXIES"):
            trusted_proxies([bad])


@pytest.mark.django_db
def test_the_anonymous_throttle_ignores_a_clients_x_forwarded_for(settings: Any) -> None:
    settings.KIONGA_THROTTLE_ANON = "2/minute"
    key = f"{throttles.KEY_PREFIX}anon:{CLIENT}"
    sync_redis().delete(key)
    try:
        statuses = [Client().get("/api/docs/", REMOTE_ADDR=CLIENT,
                                 HTTP_X_FORWARDED_FOR=f"198.51.100.{index}").status_code
                    for index in range(3)]
    finally:
        sync_redis().delete(key)
    assert statuses == [200, 200, 429]
