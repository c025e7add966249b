"""How the API reference groups the operations: one tag each, and a one-line summary.

Keyed by the ``operation_id`` each view already declares, so the views stay as they
are; ``kionga.schema.CatalogueAutoSchema`` applies this, and warns about an operation
missing here (``tests/test_platform_schema.py`` generates with ``--fail-on-warn``).
Plain data, no Django: settings.py hands ``TAGS`` to drf-spectacular.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class Entry(NamedTuple):
    tag: str
    summary: str


# In the order Swagger UI and ReDoc list the groups; a tag no operation of a document
# uses is left out of it (kionga.schema.keep_used_tags): "internal" is only in the
# internal listener's document.
TAGS: Final[list[dict[str, str]]] = [
    {"name": "designs", "description": "Agent designs: create, read, save and validate a "
                                       "graph (drafts; nothing runs in production)."},
    {"name": "components", "description": "What graphs are built from: the component "
                                          "registry and the starter templates."},
    {"name": "versions", "description": "Published versions: immutable artifacts of a "
                                        "design revision, the unit that is deployed."},
    {"name": "runs", "description": "Runs of a design revision or a published version: "
                                    "start (JSON or a live event stream), follow, cancel."},
    {"name": "evaluations", "description": "Test cases (fixtures) of a design and "
                                           "evaluations that run and judge them."},
    {"name": "approvals", "description": "Approval requests raised by runs at approval "
                                         "nodes: list, read and decide them."},
    {"name": "agents", "description": "Deployed agents: deploy a version to the managed "
                                      "runtime and follow its rollouts."},
    {"name": "operations", "description": "Operations metrics: a project's last 24 hours "
                                          "and one agent's traffic, latency and cost."},
    {"name": "projects", "description": "Where to start and who you are: the API's entry "
                                        "points, you and your projects, the members of a "
                                        "project with their roles, invitations, and a "
                                        "project's live notices of what changed."},
    {"name": "tokens", "description": "API tokens: your own (create, rename, revoke) and, "
                                      "for project admins, the tokens used in their "
                                      "project."},
    {"name": "resources", "description": "A project's resources that runs call: models, "
                                         "functions, API connections, knowledge bases "
                                         "and datasets."},
    {"name": "internal", "description": "The internal listener: what a run or agent "
                                        "credential may call. Not on the public port."},
]

_GROUPS: Final[dict[str, dict[str, str]]] = {
    "designs": {
        "list_designs": "List the designs of your projects",
        "create_design": "Create a design",
        "get_design": "Read a design with its graph, validation and revisions",
        "save_design": "Save a new revision of a design",
        "validate_design": "Validate a design's saved revision or a canvas",
        "validate_graph": "Validate an unsaved graph",
        "diff_design": "Compare two revisions or versions of a design",
        "restore_revision": "Restore an old revision as the next one",
        "list_pins": "List a design's pinned node outputs",
        "set_pin": "Pin a node's output for design-time runs",
        "clear_pin": "Clear a node's pinned output",
    },
    "components": {
        "components": "Read the component registry",
        "templates": "List the starter templates",
    },
    "versions": {
        "publish_design": "Publish a design revision as a version",
        "list_design_versions": "List a design's versions and where they are deployed",
        "list_versions": "List the versions of your projects",
        "get_version": "Read a version's artifact",
    },
    "runs": {
        "list_runs": "List a design's runs",
        "start_run": "Start a run of a design",
        "get_run": "Read a run with its events",
        "cancel_run": "Cancel a run",
        "run_events": "Read or stream a run's events",
        "list_run_nodes": "List a run's node records (inputs, outputs, tokens, time)",
        "get_run_node": "Read every attempt of one node of a run",
        "start_version_run": "Start a run of a published version",
    },
    "evaluations": {
        "get_fixtures": "Read a design's test cases",
        "put_fixtures": "Save a design's test cases",
        "add_fixture_case": "Add one test case (or save a run as one)",
        "update_fixture_case": "Replace one test case",
        "delete_fixture_case": "Delete one test case",
        "suggest_fixtures": "Suggest test cases from the graph's paths",
        "list_evaluations": "List a design's evaluations",
        "start_evaluation": "Start an evaluation",
        "get_evaluation": "Read an evaluation with its cases",
        "cancel_evaluation": "Cancel an evaluation",
        "review_evaluation_case": "Review an evaluation case",
    },
    "approvals": {
        "list_approvals": "List the approval requests of your projects",
        "create_approval": "Create an approval request (always refused here)",
        "get_approval": "Read an approval request",
        "decide_approval": "Approve or reject an approval request",
    },
    "agents": {
        "deploy_version": "Deploy a version as an agent",
        "list_agents": "List deployed agents",
        "get_agent": "Read an agent with its rollouts",
        "rollback_agent": "Roll an agent back to the version it ran before (or end its canary)",
        "promote_agent_canary": "Promote an agent's canary: it becomes the agent's version",
        "list_agent_api_keys": "List an agent's API keys (never the keys)",
        "create_agent_api_key": "Create an API key for calling an agent (shown once)",
        "revoke_agent_api_key": "Revoke an agent's API key at once",
        "list_agent_triggers": "List an agent's webhooks and schedules",
        "create_agent_trigger": "Create a webhook (its secret shown once) or a schedule",
        "get_agent_trigger": "Read a trigger with the turns it started",
        "update_agent_trigger": "Change, enable or disable a trigger",
        "delete_agent_trigger": "Delete a trigger",
        "deliver_webhook": "Deliver a signed webhook: starts a turn of its agent",
    },
    "operations": {
        "designs_overview": "A project's runs and agents over the last 24 hours",
        "agent_operations": "An agent's traffic, latency, tokens and cost",
    },
    "projects": {
        "api_root": "The API's entry points and docs (no credentials needed)",
        "me": "Who you are and your projects' roles",
        "list_members": "List a project's members",
        "add_member": "Invite a person to a project",
        "change_member": "Change a member's role",
        "remove_member": "Remove a member from a project",
        "list_project_invitations": "List a project's invitations",
        "revoke_invitation": "Revoke an invitation",
        "list_my_invitations": "List the invitations you may accept",
        "accept_invitation": "Accept an invitation: join its project",
        "decline_invitation": "Decline an invitation",
        "project_notices": "Follow a project's notices (what changed) as Server-Sent Events",
    },
    "tokens": {
        "list_my_tokens": "List your API tokens",
        "create_my_token": "Create an API token",
        "update_my_token": "Rename a token or change its expiry",
        "revoke_my_token": "Revoke one of your tokens",
        "list_project_tokens": "List the tokens used in or revoked for a project",
        "revoke_project_token": "Revoke a token's access to a project",
    },
    "resources": {
        "list_resources": "List a project's resources",
        "list_documents": "List a knowledge base's documents",
        "add_document": "Add a document to a knowledge base",
        "remove_document": "Remove a document from a knowledge base",
        "read_objects": "List a dataset's keys or read one object",
        "put_object": "Store an object in a dataset",
        "delete_object": "Delete an object from a dataset",
        "list_mcp_tools": "List an MCP server's tools as last listed",
        "refresh_mcp_tools": "List an MCP server's tools now (tools/list)",
    },
    "internal": {
        "internal_predict": "Call a model for a run",
        "internal_invoke_function": "Invoke a function for a run",
        "internal_invoke_connection": "Call an API connection for a run",
        "internal_knowledge_bases": "List the knowledge bases a run may search",
        "internal_search_knowledge": "Search a knowledge base for a run",
        "internal_read_object": "Read a dataset object for a run",
        "internal_create_approval": "Ask for an approval from a run",
        "internal_get_approval": "Poll an approval request from a run",
        "internal_open_agent_turn": "Open a deployed agent's turn",
        "internal_report_agent_turn": "Report how an agent's turn ended",
        "internal_check_agent_api_key": "Verify and count a caller's agent API key",
        "internal_claim_agent_turn": "Claim a turn a trigger opened, to run it",
    },
}

# The per-kind resource routes (kionga/projects/resource_views.py names them by kind).
_RESOURCE_KINDS: Final[dict[str, str]] = {
    "model": "a model endpoint", "function": "a function", "connection": "an API connection",
    "knowledge_base": "a knowledge base", "dataset": "a dataset",
    "mcp_server": "an MCP server",
}
_KIND_VERBS: Final[dict[str, str]] = {
    "create": "Create", "get": "Read", "update": "Change", "delete": "Delete",
}

OPERATIONS: Final[dict[str, Entry]] = {
    **{operation: Entry(tag, summary)
       for tag, summaries in _GROUPS.items() for operation, summary in summaries.items()},
    **{f"{verb}_{kind}": Entry("resources", f"{word} {label}")
       for kind, label in _RESOURCE_KINDS.items() for verb, word in _KIND_VERBS.items()},
}
