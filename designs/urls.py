"""Routes of the designs API, included under /api/v1/."""

from django.urls import path

from designs import views

urlpatterns = [
    path("agent-designs/components", views.components, name="design-components"),
    path("agent-designs/templates", views.templates, name="design-templates"),
    path("agent-designs/validate", views.validate_unsaved, name="design-validate-unsaved"),
    path("agent-designs", views.designs, name="designs"),
    path("agent-designs/<uuid:design_id>", views.design, name="design"),
    path("agent-designs/<uuid:design_id>/validate", views.validate_saved, name="design-validate"),
]
