"""The platform's resource routes on the internal listener (mounted under /api/v1/).

Exactly the reference's list of allowed resource calls; approval create/poll comes
from approvals/internal_urls.py. Anything else on this listener is a 404.
"""

from django.urls import path

from runs import agent_turn_views
from runs.internal import views

urlpatterns = [
    path("models/<str:model_id>/predict", views.predict, name="internal-predict"),
    # <path:>: an MCP tool's function name has a "/" (mcp:<server>/<tool>).
    path("functions/<path:name>/invoke", views.invoke_function, name="internal-invoke-function"),
    path("agent-api-connections/<str:connection_id>/invoke", views.invoke_connection,
         name="internal-invoke-connection"),
    path("knowledge-bases", views.knowledge_bases, name="internal-knowledge-bases"),
    path("knowledge-bases/<str:knowledge_base_id>/search", views.search_knowledge,
         name="internal-search-knowledge"),
    path("datasets/<str:dataset_id>/object", views.read_object, name="internal-read-object"),
    # The deployed agent runtime's turns (agent credential; runs/agent_auth.py).
    path("agent-turns", agent_turn_views.open_turn, name="internal-agent-turns"),
    path("agent-turns/<uuid:turn_id>/report", agent_turn_views.report_turn,
         name="internal-agent-turn-report"),
    path("agent-keys/check", agent_turn_views.check_key, name="internal-agent-key-check"),
]
