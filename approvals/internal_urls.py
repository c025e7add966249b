"""Approval routes of the internal listener: a run creates and polls its own requests.

The decision route is public-listener only: run credentials can never decide.
"""

from django.urls import path

from approvals import internal_views

urlpatterns = [
    path("agent-approvals", internal_views.approvals, name="internal-approvals"),
    path("agent-approvals/<str:approval_id>", internal_views.approval, name="internal-approval"),
]
