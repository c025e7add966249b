"""Metrics routes, included under /api/v1/."""

from django.urls import path

from operations import views

urlpatterns = [
    path("agent-designs/overview", views.overview, name="designs-overview"),
    path("agents/<uuid:agent_id>/operations", views.operations, name="agent-operations"),
]
