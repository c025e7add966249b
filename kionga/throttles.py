"""Per-user API throttles (DRF throttle classes), counted in Redis so every gateway
process shares them.

A sliding window per caller, kept as a Redis sorted set of request times and checked
and counted by one script: one round trip, atomic (two concurrent requests cannot both
take the last place), and O(log n) whatever the rate — DRF's cache-based throttle read,
unpickled and wrote back the caller's whole history (up to the rate's count) on every
request, in two round trips.

Rates come from settings at each request (KIONGA_THROTTLE_USER for signed-in callers,
KIONGA_THROTTLE_ANON per address for the few routes open without authentication), so
operators and tests can change them. Answers are 429 `throttled` with Retry-After
(kionga.errors). When Redis cannot be reached the request is let through: a throttle
must not turn a Redis blip into an outage of the whole API.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework import exceptions, throttling
from rest_framework.request import Request

from kionga.proxies import client_address
from kionga.redis_client import sync_redis

logger = logging.getLogger(__name__)

KEY_PREFIX: Final = "kionga:throttle:"

# One caller's window as a Lua function, so a script of its own (_WINDOW) and a caller
# that counts the throttles together with other work (runs.quota: the start's slot)
# run the same code. key: the window; now (ms), window (ms), limit, a unique member.
# Returns {allowed 0/1, requests in the window, time of the oldest (ms)}.
WINDOW_LUA: Final = """
local function throttle_window(key, now, window, limit, member)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count >= limit then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    return {0, count, tonumber(oldest[2])}
  end
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, window)
  return {1, count + 1, now}
end
"""
_WINDOW: Final = WINDOW_LUA + """
return throttle_window(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
                       ARGV[4])
"""


@dataclass(frozen=True)
class Window:
    """One request counted in one caller's window: WINDOW_LUA's key and arguments."""

    key: str
    now: int
    window: int
    limit: int
    member: str

    @property
    def args(self) -> tuple[int, int, int, str]:
        return self.now, self.window, self.limit, self.member


class WindowThrottle(throttling.BaseThrottle):
    """`rate` requests ("N/second|minute|hour|day") per caller in a sliding window."""

    scope = ""

    def __init__(self) -> None:
        self._wait: float | None = None

    def rate(self) -> str:
        raise NotImplementedError

    def caller(self, request: Request) -> str | None:
        """Who is counted (None: this throttle does not apply)."""
        raise NotImplementedError

    def window(self, request: Request) -> Window | None:
        """What counting this request means (None: it is not counted)."""
        who = self.caller(request)
        if who is None:
            return None
        # DRF's own rate syntax and parser (it does not use its instance).
        limit, seconds = throttling.SimpleRateThrottle.parse_rate(cast(Any, self), self.rate())
        if limit is None or seconds is None:
            return None
        now = int(time.time() * 1000)
        return Window(f"{KEY_PREFIX}{self.scope}:{who}", now, int(seconds * 1000), limit,
                      f"{now}-{secrets.token_hex(4)}")

    def allow_request(self, request: Request, view: Any) -> bool:
        window = self.window(request)
        if window is None:
            return True
        try:
            verdict = sync_redis().eval(_WINDOW, 1, window.key, *window.args)
        except (RedisError, OSError):
            logger.warning("throttle counters unavailable; request let through")
            return True
        return self.judge(window, verdict)

    def judge(self, window: Window, verdict: Sequence[Any]) -> bool:
        """WINDOW_LUA's verdict on `window`; when refused, wait() says for how long."""
        allowed, count, oldest = verdict
        if allowed:
            return True
        # As DRF's SimpleRateThrottle.wait: the time until the oldest request leaves the
        # window, shared among the places free by then.
        remaining = max(0.0, (int(oldest) + window.window - window.now) / 1000)
        self._wait = remaining / max(1, window.limit - int(count) + 1)
        return False

    def wait(self) -> float | None:
        return self._wait


def admit(window: Window) -> float | None:
    """Count one request in `window` outside DRF (e.g. an agent API key's rate): None
    when it is let through (Redis unreachable included), else the seconds to wait."""
    try:
        verdict = sync_redis().eval(_WINDOW, 1, window.key, *window.args)
    except (RedisError, OSError):
        logger.warning("throttle counters unavailable; request let through")
        return None
    throttle = WindowThrottle()
    return None if throttle.judge(window, verdict) else throttle.wait()


def refusal(waits: Sequence[float | None]) -> exceptions.Throttled:
    """The 429 of refused throttles, as DRF's APIView.check_throttles answers it: the
    longest of their waits (Retry-After)."""
    return exceptions.Throttled(max((w for w in waits if w is not None), default=None))


class UserThrottle(WindowThrottle):
    """Authenticated callers, per user."""

    scope = "user"

    def rate(self) -> str:
        return str(settings.KIONGA_THROTTLE_USER)

    def caller(self, request: Request) -> str | None:
        user = request.user
        return str(user.pk) if user is not None and user.is_authenticated else None


class AnonThrottle(WindowThrottle):
    """The few routes open without authentication (schema, docs), per address."""

    scope = "anon"

    def rate(self) -> str:
        return str(settings.KIONGA_THROTTLE_ANON)

    def caller(self, request: Request) -> str | None:
        user = request.user
        if user is not None and user.is_authenticated:
            return None
        # Not DRF's get_ident: it would take any X-Forwarded-For a client sends.
        return client_address(request) or "unknown"
