"""Routes of deployed agents, included under /api/v1/."""

from django.urls import path

from deployments import views

urlpatterns = [
    path("agent-versions/<uuid:version_id>/deploy", views.deploy, name="version-deploy"),
    path("agents", views.agents, name="agents"),
    path("agents/<uuid:agent_id>", views.agent, name="agent"),
    path("agents/<uuid:agent_id>/rollback", views.rollback, name="agent-rollback"),
    path("agents/<uuid:agent_id>/promote", views.promote, name="agent-promote"),
    path("agents/<uuid:agent_id>/api-keys", views.api_keys, name="agent-api-keys"),
    path("agents/<uuid:agent_id>/api-keys/<uuid:key_id>", views.api_key,
         name="agent-api-key"),
]
