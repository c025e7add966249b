"""A run start's API throttles, counted in the slot's own Redis script.

DRF counts a route's throttles before its view. On the runs route a POST's are
counted later, together with the run's slot (runs.quota.take_slot: one round trip for
both), and the answers stay DRF's: 429 throttled before any other refusal, a throttled
start holding no slot even for a moment. `AtAdmission` is the route's throttle class:
for a POST it only notes what to count (the API's own throttle classes and windows);
for any other method it applies them as DRF does. A start that ends before the slot
(any refusal, an Idempotency-Key replay) counts them on their own first (`settle`), so
the answer is 429 throttled wherever DRF's would be.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from kionga.throttles import WindowThrottle, refusal
from runs.quota import ThrottleCount

_COUNT = "_kionga_admission"


class AtAdmission(BaseThrottle):
    """The API's throttles (REST_FRAMEWORK's DEFAULT_THROTTLE_CLASSES); a POST's are
    counted with the run's slot."""

    def __init__(self) -> None:
        self._waits: list[float | None] = []

    def allow_request(self, request: Request, view: Any) -> bool:
        throttles = APIView().get_throttles()  # the API's own, as every route counts
        if request.method == "POST" and all(isinstance(t, WindowThrottle) for t in throttles):
            windows = [(t, w) for t in throttles if isinstance(t, WindowThrottle)
                       and (w := t.window(request)) is not None]
            setattr(request, _COUNT, (ThrottleCount(windows), view))
            return True
        self._waits = [t.wait() for t in throttles if not t.allow_request(request, view)]
        return not self._waits

    def wait(self) -> float | None:
        return max((w for w in self._waits if w is not None), default=None)


def counting(request: Request) -> ThrottleCount:
    """What the start's slot counts: the throttles AtAdmission left to it."""
    noted = getattr(request, _COUNT, None)
    return noted[0] if noted is not None else ThrottleCount(done=True)


def settle(request: Request) -> None:
    """Count the throttles now if the slot did not (429 throttled if one refuses)."""
    noted = getattr(request, _COUNT, None)
    if noted is None or noted[0].done:
        return
    count, view = noted
    count.done = True
    waits = [throttle.wait() for throttle, _window in count.windows
             if not throttle.allow_request(request, view)]
    if waits:
        raise refusal(waits)
