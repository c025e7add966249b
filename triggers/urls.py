"""Routes of agents' triggers, included under /api/v1/."""

from django.urls import path

from triggers import views

urlpatterns = [
    path("agents/<uuid:agent_id>/triggers", views.triggers, name="agent-triggers"),
    path("agents/<uuid:agent_id>/triggers/<uuid:trigger_id>", views.trigger,
         name="agent-trigger"),
    # Public: the signature is the credential (triggers/webhooks.py).
    path("hooks/<uuid:trigger_id>", views.hook, name="webhook"),
]
