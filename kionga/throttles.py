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
from typing import Any, Final, cast

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework import throttling
from rest_framework.request import Request

from kionga.redis_client import sync_redis

logger = logging.getLogger(__name__)

KEY_PREFIX: Final = "kionga:throttle:"

# KEYS[1] the caller's window; ARGV: now (ms), window (ms), limit, a unique member.
# Returns {allowed 0/1, requests in the window, time of the oldest (ms)}.
_WINDOW: Final = """
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, count, tonumber(oldest[2])}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {1, count + 1, now}
"""


class _Window(throttling.BaseThrottle):
    """`rate` requests ("N/second|minute|hour|day") per caller in a sliding window."""

    scope = ""

    def __init__(self) -> None:
        self._wait: float | None = None

    def rate(self) -> str:
        raise NotImplementedError

    def caller(self, request: Request) -> str | None:
        """Who is counted (None: this throttle does not apply)."""
        raise NotImplementedError

    def allow_request(self, request: Request, view: Any) -> bool:
        who = self.caller(request)
        if who is None:
            return True
        # DRF's own rate syntax and parser (it does not use its instance).
        limit, seconds = throttling.SimpleRateThrottle.parse_rate(cast(Any, self), self.rate())
        if limit is None or seconds is None:
            return True
        now, window = int(time.time() * 1000), int(seconds * 1000)
        try:
            allowed, count, oldest = sync_redis().eval(
                _WINDOW, 1, f"{KEY_PREFIX}{self.scope}:{who}", now, window, limit,
                f"{now}-{secrets.token_hex(4)}")
        except (RedisError, OSError):
            logger.warning("throttle counters unavailable; request let through")
            return True
        if allowed:
            return True
        # As DRF's SimpleRateThrottle.wait: the time until the oldest request leaves the
        # window, shared among the places free by then.
        remaining = max(0.0, (int(oldest) + window - now) / 1000)
        self._wait = remaining / max(1, limit - int(count) + 1)
        return False

    def wait(self) -> float | None:
        return self._wait


class UserThrottle(_Window):
    """Authenticated callers, per user."""

    scope = "user"

    def rate(self) -> str:
        return str(settings.KIONGA_THROTTLE_USER)

    def caller(self, request: Request) -> str | None:
        user = request.user
        return str(user.pk) if user is not None and user.is_authenticated else None


class AnonThrottle(_Window):
    """The few routes open without authentication (schema, docs), per address."""

    scope = "anon"

    def rate(self) -> str:
        return str(settings.KIONGA_THROTTLE_ANON)

    def caller(self, request: Request) -> str | None:
        user = request.user
        return None if user is not None and user.is_authenticated else self.get_ident(request)
