"""Public approval routes, included under /api/v1/."""

from django.urls import path

from approvals import views

urlpatterns = [
    path("agent-approvals", views.approvals, name="approvals"),
    path("agent-approvals/<uuid:approval_id>", views.approval, name="approval"),
    path("agent-approvals/<uuid:approval_id>/decision", views.decision,
         name="approval-decision"),
]
