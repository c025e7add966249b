"""Routes of deployed agents, included under /api/v1/."""

from django.urls import path

from deployments import views

urlpatterns = [
    path("agent-versions/<uuid:version_id>/deploy", views.deploy, name="version-deploy"),
    path("agents", views.agents, name="agents"),
    path("agents/<uuid:agent_id>", views.agent, name="agent"),
]
