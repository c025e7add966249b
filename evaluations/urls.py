"""Routes of the evaluations API, included under /api/v1/."""

from django.urls import path

from evaluations import views

urlpatterns = [
    path("agent-designs/<uuid:design_id>/fixtures", views.design_fixtures,
         name="design-fixtures"),
    path("agent-designs/<uuid:design_id>/fixtures/suggest", views.suggest,
         name="design-fixtures-suggest"),
]
