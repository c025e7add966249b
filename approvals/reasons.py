"""Why a request ended, in words: stored on the request when it ends (`reason`), shown by
the API and the approver pages. One sentence per way a request can end."""

from __future__ import annotations

from datetime import datetime
from typing import Any

TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"
# Stored by migration 0002 on requests that ended before reasons were stored.
EARLIER_EXPIRED = "Nobody decided before the deadline."
EARLIER_CANCELLED = "The run ended before anyone decided."


def decided(decision: str, who: str, comment: str) -> str:
    """Approved or rejected by a person, with their comment."""
    verb = "Approved" if decision == "approve" else "Rejected"
    return f"{verb} by {who}: {comment}" if comment.strip() else f"{verb} by {who} (no comment)."


def expired(deadline: datetime) -> str:
    return (f"Nobody decided before the deadline ({deadline.strftime(TIME_FORMAT)}); "
            "the step went on down its rejected path.")


def run_ended(status: str, error: Any) -> str:
    """The request's run ended (any way) while it was pending: how the run ended."""
    if status == "cancelled":
        how = "it was cancelled"
    elif status == "failed":
        how = "it failed"
        if isinstance(error, dict) and error.get("code"):
            message = str(error.get("message") or "").rstrip(".")
            how += f" ({error['code']}: {message})" if message else f" ({error['code']})"
    else:
        how = f"it {status}"
    return f"The run ended before anyone decided: {how}."
