"""Approval routes of the internal listener: a run creates and polls its own requests.

The decision route is public-listener only: run credentials can never decide.
"""

from django.urls import path

from approvals import internal_views

urlpatterns = [
    path("agent-approvals", internal_views.approvals, name="internal-approvals"),
    path("agent-approvals/<uuid:approval_id>", internal_views.approval, name="internal-approval"),
    # Not a UUID: the same 404 as another run's request, after the credential check.
    path("agent-approvals/<str:approval_id>", internal_views.not_an_approval,
         name="internal-approval-malformed"),
]
