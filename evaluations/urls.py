"""Routes of the evaluations API, included under /api/v1/."""

from django.urls import path

from evaluations import views

urlpatterns = [
    path("agent-designs/<uuid:design_id>/fixtures", views.design_fixtures,
         name="design-fixtures"),
    path("agent-designs/<uuid:design_id>/fixtures/cases", views.fixture_cases,
         name="design-fixture-cases"),
    path("agent-designs/<uuid:design_id>/fixtures/cases/<str:case_id>", views.fixture_case,
         name="design-fixture-case"),
    path("agent-designs/<uuid:design_id>/fixtures/suggest", views.suggest,
         name="design-fixtures-suggest"),
    path("agent-designs/<uuid:design_id>/evaluations", views.design_evaluations,
         name="design-evaluations"),
    path("agent-evaluations/<uuid:evaluation_id>", views.evaluation, name="evaluation"),
    path("agent-evaluations/<uuid:evaluation_id>/cancel", views.cancel,
         name="evaluation-cancel"),
    path("agent-evaluations/<uuid:evaluation_id>/cases/<str:case_id>/review", views.review,
         name="evaluation-case-review"),
]
