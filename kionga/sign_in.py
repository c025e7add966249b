"""Failed sign-ins: a lock per (user name, address) and a slowdown per address.

Every sign-in page (the admin's, the designer's, the approvals UI's) is Django's
LoginView, which authenticates through django-axes (AxesStandaloneBackend first in
AUTHENTICATION_BACKENDS); axes asks this module's handler (AXES_HANDLER), so these rules
hold on each of them, and on any later page that authenticates with its request.
See docs/decisions/sign-in-lockouts.md.

- **Lock**: KIONGA_LOGIN_FAILURE_LIMIT failures for one name from one address lock that
  pair for the cool-off (AXES_LOCKOUT_PARAMETERS). Wrong passwords for made-up names
  lock nobody; wrong passwords for alice lock alice from that address only.
- **Slowdown**: the failures from one address, whatever the names, are counted in Redis
  over the cool-off. Past KIONGA_LOGIN_ADDRESS_FAILURES its sign-ins pass one at a time:
  each one let through closes the address's gate for 1 s, 2 s, 4 s ... at most
  KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS; one arriving while the gate is closed is refused
  with 429 and Retry-After, without checking or counting it. A correct name and password
  from that address waits at most that long for its turn.
- **Trusted browsers**: a browser that signed in as a name before (a signed cookie, kept
  TRUSTED_BROWSER_DAYS) passes the gate for that name: people who work behind the
  attacked address keep signing in at once. Its failures still count, and lock its pair.
- **Redis unreachable**: no slowdown (logged); the locks, in PostgreSQL, still hold.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import secrets
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Final

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from redis.exceptions import RedisError

from kionga.redis_client import sync_redis

logger = logging.getLogger(__name__)

KEY_PREFIX: Final = "kionga:sign-in:"
# The gate's first closing; each further failure past the threshold doubles it.
FIRST_DELAY_MS: Final = 1000
# Failures kept per address: far more than the delay needs to reach its ceiling.
MAX_COUNTED_FAILURES: Final = 1000

TRUSTED_BROWSER_COOKIE: Final = "kionga_sign_in"
TRUSTED_BROWSER_DAYS: Final = 30
_TRUSTED_BROWSER_SALT: Final = "kionga.sign_in.trusted-browser"

# Request attributes: seconds the gate refused for; the name just signed in.
_GATE_WAIT: Final = "kionga_sign_in_wait"
_SIGNED_IN_AS: Final = "kionga_signed_in_as"

# KEYS: the address's failures (a sorted set of times, ms) and its gate. ARGV: now,
# the window (ms), the threshold, the first delay and the longest (ms). Returns 0 when
# the attempt may go on (taking the gate's turn once past the threshold), else the
# time left (ms) until the gate opens. One script: of attempts arriving together,
# only one takes the turn.
_ADMIT: Final = """
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local threshold, first, longest = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local failures = redis.call('ZCARD', KEYS[1])
if failures < threshold then return 0 end
local wait = redis.call('PTTL', KEYS[2])
if wait > 0 then return wait end
local delay = math.min(first * 2 ^ (failures - threshold), longest)
redis.call('SET', KEYS[2], '1', 'PX', math.floor(delay))
return 0
"""


def _keys(address: str | None) -> tuple[str, str]:
    where = address or "unknown"
    return f"{KEY_PREFIX}failures:{where}", f"{KEY_PREFIX}gate:{where}"


def _window_ms() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds() * 1000)


def gate_wait(address: str | None) -> int:
    """0 when a sign-in from `address` may go on now (it takes the gate's turn when the
    address is slowed down); else the seconds until the gate opens."""
    failures, gate = _keys(address)
    try:
        wait_ms = int(sync_redis().eval(
            _ADMIT, 2, failures, gate, int(time.time() * 1000), _window_ms(),
            settings.KIONGA_LOGIN_ADDRESS_FAILURES, FIRST_DELAY_MS,
            settings.KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS * 1000))
    except (RedisError, OSError):
        logger.warning("sign-in failure counters unavailable; no slowdown")
        return 0
    return math.ceil(wait_ms / 1000) if wait_ms > 0 else 0


def record_failure(address: str | None) -> None:
    """Count one failed sign-in from `address` (whatever the name)."""
    failures, _ = _keys(address)
    now = int(time.time() * 1000)
    try:
        with sync_redis().pipeline(transaction=True) as pipe:
            pipe.zadd(failures, {f"{now}-{secrets.token_hex(4)}": now})
            pipe.zremrangebyrank(failures, 0, -MAX_COUNTED_FAILURES - 1)
            pipe.pexpire(failures, _window_ms())
            pipe.execute()
    except (RedisError, OSError):
        logger.warning("sign-in failure counters unavailable; failure not counted")


def forget_failures(address: str | None) -> None:
    """Clear `address`'s failures and open its gate."""
    sync_redis().delete(*_keys(address))


def _name_mark(username: str) -> str:
    # The cookie names its user by a hash: it is signed, not encrypted.
    return hashlib.sha256(username.encode()).hexdigest()[:32]


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=_TRUSTED_BROWSER_SALT)


def is_trusted_browser(request: HttpRequest, username: str | None) -> bool:
    """Whether this browser signed in as `username` within TRUSTED_BROWSER_DAYS."""
    cookie = request.COOKIES.get(TRUSTED_BROWSER_COOKIE)
    if not cookie or not username:
        return False
    try:
        mark = _signer().unsign(cookie, max_age=timedelta(days=TRUSTED_BROWSER_DAYS))
    except signing.BadSignature:  # forged, altered or expired
        return False
    return hmac.compare_digest(mark, _name_mark(username))


class SignInHandler(AxesDatabaseHandler):  # type: ignore[misc]
    """django-axes' database handler (the pair locks) plus the address's gate."""

    def is_allowed(self, request: HttpRequest, credentials: dict[str, Any] | None = None
                   ) -> bool:
        # The gate first: a refused attempt then costs no database work at all.
        if not is_trusted_browser(request, get_client_username(request, credentials)):
            wait = gate_wait(request.axes_ip_address)  # type: ignore[attr-defined]
            if wait:
                setattr(request, _GATE_WAIT, wait)
                return False
        return bool(super().is_allowed(request, credentials))

    def user_login_failed(self, sender: Any, credentials: dict[str, Any],
                          request: HttpRequest | None = None, **kwargs: Any) -> None:
        if request is not None and getattr(request, _GATE_WAIT, None):
            # Refused at the gate: nothing was checked, so nothing is counted.
            request.axes_locked_out = True  # type: ignore[attr-defined]
            request.axes_credentials = credentials  # type: ignore[attr-defined]
            return
        super().user_login_failed(sender, credentials, request, **kwargs)
        if request is not None:
            record_failure(request.axes_ip_address)  # type: ignore[attr-defined]

    def user_logged_in(self, sender: Any, request: HttpRequest, user: Any,
                       **kwargs: Any) -> None:
        super().user_logged_in(sender, request, user, **kwargs)
        setattr(request, _SIGNED_IN_AS, user.get_username())


def refusal(request: HttpRequest, original_response: HttpResponseBase | None = None,
            credentials: dict[str, Any] | None = None) -> HttpResponse:
    """The answer to a refused sign-in (AXES_LOCKOUT_CALLABLE): 429 with Retry-After."""
    gate = getattr(request, _GATE_WAIT, None)
    if gate:
        wait = int(gate)
        message = (f"Too many failed sign-ins from your network. "
                   f"Try again in {wait} seconds.")
    else:
        # A failure during the lock restarts its cool-off: the whole of it is left.
        wait = int(settings.AXES_COOLOFF_TIME.total_seconds())
        message = (f"Too many failed sign-ins for this user name from your network. "
                   f"Try again in {math.ceil(wait / 60)} minutes.")
    response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(wait)
    return response


class TrustedBrowserMiddleware:
    """Gives a browser that just signed in the trusted-browser cookie for that name."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        username = getattr(request, _SIGNED_IN_AS, None)
        if username:
            response.set_cookie(
                TRUSTED_BROWSER_COOKIE, _signer().sign(_name_mark(username)),
                max_age=TRUSTED_BROWSER_DAYS * 24 * 3600, httponly=True, samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE)
        return response
