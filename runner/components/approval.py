"""approval: ask a person through the gateway and wait for the decision (a long poll).

approve → `approved` with the incoming value; reject → `rejected` with the comment;
no decision within timeout_seconds → `rejected` with reason `expired`. The gateway's
clock decides: it stores the request as expired at its deadline (a sweep each second,
and on this node's next poll), so past its own deadline the node keeps asking for a
short grace and takes the gateway's answer — a decision the gateway accepted just in
time wins, and the request never stays pending behind an expired run step. Only when
the gateway cannot say within the grace does the node expire on its own. If the run
is cancelled while waiting, the gateway cancels the request when it revokes the run's
credential. In a run given scripted approvals (an evaluation's case) it asks nobody
and resolves at once as scripted. While it waits, the run's timeout_seconds (and every
enclosing timeout) stands still: docs/decisions/run-clock-and-approval-waits.md.

The wait is a long poll: each GET asks the gateway to hold its answer until the
decision (or LONG_POLL_SECONDS, or the deadline), so a waiting run makes one request
per LONG_POLL_SECONDS on the run's one kept-alive connection and a decision reaches it
within the gateway's watch interval (docs/decisions/parked-approval-runs.md). An
answer that comes back sooner while the request is still pending (a gateway that does
not hold it) is followed by the request's poll interval before the next.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from contracts.conversions import to_text
from contracts.types import PortType
from runner.components import implements
from runner.components.prompt import substitute
from runner.context import NodeContext, NodeOutput
from runner.failures import NodeFailure
from runner.request import ApprovalDecision

# Seconds per "second" of timeout_seconds; tests shrink it to exercise expiry.
SECOND = 1.0
# The longest the gateway is asked to hold one poll (real seconds).
LONG_POLL_SECONDS = 20.0
DEFAULT_MESSAGE = "Approve this step?"
# How long past its deadline the node waits for the gateway's verdict (in SECONDs);
# timeout_seconds ≤ 290 plus this stays inside the kind's 300 s node timeout.
GRACE_SECONDS = 5


@implements("approval")
async def run_approval(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    text = to_text(value, vtype)
    scripted = ctx.run.scripted_approvals
    if scripted is not None:
        return scripted_outcome(scripted.decision(ctx.node_id), text)
    message = substitute(ctx.setting("message"), text) or DEFAULT_MESSAGE
    timeout = ctx.int_setting("timeout_seconds")
    redactor = ctx.run.redactor
    created = await ctx.run.resources.create_approval(
        ctx.node_id, redactor.preview(message), redactor.preview(text), timeout
    )
    approval_id = created.get("id")
    if not isinstance(approval_id, str) or not approval_id:
        raise NodeFailure("node_error", "the approval request was not created")
    emitter = ctx.run.emitter
    emitter.event("approval.requested", node_id=ctx.node_id, approval_id=approval_id)
    # The wait is bounded by the approval's own timeout (and grace), not by the run's:
    # the run's clocks stand still meanwhile (runner.clock).
    with ctx.clock.waiting_for_a_person():
        status, comment = await _wait(ctx, approval_id, time.monotonic() + timeout * SECOND)
    if status == "approved":
        port, reason, out = "approved", "approved", text
    elif status == "rejected":
        port, reason, out = "rejected", "rejected", comment
    else:  # expired (or cancelled by someone else): the rejected branch, with the reason
        port, reason, out = "rejected", status, comment or status
    emitter.event("approval.resolved", node_id=ctx.node_id, approval_id=approval_id,
                  port=port, reason=reason)
    return NodeOutput(port, out, reason=reason)


def scripted_outcome(decision: ApprovalDecision, text: str) -> NodeOutput:
    """A decision the run was given (an evaluation's case): no request, no wait, no
    approval events; node.completed carries the port and the reason, as for a person's
    decision without a comment."""
    if decision == "approve":
        return NodeOutput("approved", text, reason="approved")
    return NodeOutput("rejected", "", reason="rejected")


async def _wait(ctx: NodeContext, approval_id: str, deadline: float) -> tuple[str, str]:
    poll = max(ctx.run.request.approval_poll_seconds, 0.001)
    give_up = deadline + GRACE_SECONDS * SECOND
    hold = 0.0
    while True:
        asked = time.monotonic()
        answer = await ctx.run.resources.get_approval(approval_id, wait=hold)
        status = answer.get("status")
        if status in ("approved", "rejected", "expired", "cancelled"):
            comment = answer.get("comment")
            return str(status), comment if isinstance(comment, str) else ""
        now = time.monotonic()
        if now >= give_up:
            return "expired", ""
        # Before the deadline, wake at it at the latest: the gateway expires the request
        # on that poll. Both waits are positive here.
        wake = deadline if now < deadline else give_up
        pause = min(poll - (now - asked), wake - now)
        if pause > 0:
            await asyncio.sleep(pause)
        hold = max(0.0, min(LONG_POLL_SECONDS, wake - time.monotonic()))
