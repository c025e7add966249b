"""Routes of the runs API, included under /api/v1/."""

from django.urls import path

from runs import version_views, views

urlpatterns = [
    path("agent-designs/<uuid:design_id>/runs", views.runs, name="runs"),
    path("agent-designs/<uuid:design_id>/runs/<uuid:run_id>", views.run, name="run"),
    path("agent-designs/<uuid:design_id>/runs/<uuid:run_id>/events", views.events,
         name="run-events"),
    path("agent-designs/<uuid:design_id>/runs/<uuid:run_id>/cancel", views.cancel,
         name="run-cancel"),
    path("agent-designs/<uuid:design_id>/runs/<uuid:run_id>/nodes", views.nodes,
         name="run-nodes"),
    path("agent-designs/<uuid:design_id>/runs/<uuid:run_id>/nodes/<slug:node_id>", views.node,
         name="run-node"),
    path("agent-versions/<uuid:version_id>/runs", version_views.version_runs,
         name="version-runs"),
]
