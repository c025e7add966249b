"""Approval routes of the internal listener: a run creates and polls its own requests.

The decision is people's: here its route answers 403 to the run credential (a run can
never decide, not even its own request).
"""

from django.urls import path

from approvals import internal_views

urlpatterns = [
    path("agent-approvals", internal_views.approvals, name="internal-approvals"),
    path("agent-approvals/<uuid:approval_id>", internal_views.approval, name="internal-approval"),
    path("agent-approvals/<uuid:approval_id>/decision", internal_views.no_decision,
         name="internal-approval-decision"),
    # Not a UUID: the same 404 as another run's request, after the credential check.
    path("agent-approvals/<str:approval_id>", internal_views.not_an_approval,
         name="internal-approval-malformed"),
]
