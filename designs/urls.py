"""Routes of the designs API, included under /api/v1/."""

from django.urls import path

from designs import version_views, views

urlpatterns = [
    path("agent-designs/components", views.components, name="design-components"),
    path("agent-designs/templates", views.templates, name="design-templates"),
    path("agent-designs/validate", views.validate_unsaved, name="design-validate-unsaved"),
    path("agent-designs", views.designs, name="designs"),
    path("agent-designs/<uuid:design_id>", views.design, name="design"),
    path("agent-designs/<uuid:design_id>/validate", views.validate_saved, name="design-validate"),
    path("agent-designs/<uuid:design_id>/diff", views.diff, name="design-diff"),
    path("agent-designs/<uuid:design_id>/revisions/<int:number>/restore", views.restore,
         name="design-restore"),
    path("agent-designs/<uuid:design_id>/pins", views.pin_list, name="design-pins"),
    path("agent-designs/<uuid:design_id>/pins/<slug:node_id>", views.pin, name="design-pin"),
    path("agent-designs/<uuid:design_id>/publish", version_views.publish, name="design-publish"),
    path("agent-designs/<uuid:design_id>/versions", version_views.design_versions,
         name="design-versions"),
    path("agent-versions", version_views.versions, name="versions"),
    path("agent-versions/<uuid:version_id>", version_views.version, name="version"),
]
