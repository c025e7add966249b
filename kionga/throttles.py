"""Per-user API throttles (DRF), counted in Redis so every gateway process shares them.

Rates come from settings at each request (KIONGA_THROTTLE_USER, KIONGA_THROTTLE_ANON),
so operators and tests can change them. Answers are 429 `throttled` with Retry-After
(kionga.errors). When Redis cannot be reached the request is let through: a throttle
must not turn a Redis blip into an outage of the whole API.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework import throttling
from rest_framework.request import Request

logger = logging.getLogger(__name__)


class _FailOpen:
    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return bool(super().allow_request(request, view))  # type: ignore[misc]
        except (RedisError, OSError):
            logger.warning("throttle counters unavailable; request let through")
            return True


class UserThrottle(_FailOpen, throttling.UserRateThrottle):
    """Authenticated callers, per user (anonymous ones per address)."""

    def get_rate(self) -> str | None:
        return str(settings.KIONGA_THROTTLE_USER)


class AnonThrottle(_FailOpen, throttling.AnonRateThrottle):
    """The few routes open without authentication (schema, docs), per address."""

    def get_rate(self) -> str | None:
        return str(settings.KIONGA_THROTTLE_ANON)
