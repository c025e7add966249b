"""The triggers' route on the internal listener (mounted under /api/v1/)."""

from django.urls import path

from triggers import internal_views

urlpatterns = [
    # A turn a trigger opened, claimed once by the agent's runtime (agent credential).
    path("agent-turns/<uuid:turn_id>/claim", internal_views.claim_turn,
         name="internal-agent-turn-claim"),
]
