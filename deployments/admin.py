"""Admin for ops staff: deployed agents with their rollout timelines, and their credentials.

Read-only: an agent changes by deploying (the API re-checks resources and the quality
gate), by rolling back to the version it ran before or promoting its canary (the same
actions as the API's, hash-verified). The actions are that rollback (which ends a
canary when one runs), the promotion and revoking credentials and callers' API keys,
audited. The
operations dashboard and the agent's turns are linked by URL (operations and runs sit
above deployments).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from deployments.api_keys import do_revoke_key
from deployments.models import Agent, AgentApiKey, AgentCredential, Rollout
from deployments.promote import do_promote
from deployments.rollback import do_rollback
from kionga import audit
from kionga.admin import ReadOnlyAdmin
from kionga.errors import APIError


def _links(agent: Agent) -> str:
    turns = f"{reverse('admin:runs_run_changelist')}?{urlencode({'agent__id__exact': agent.pk})}"
    failing = f"{turns}&status__exact=failed"
    dashboard = reverse("admin:operations_agentoperations_change", args=[agent.pk])
    return format_html('<a href="{}">operations</a> · <a href="{}">turns</a> · '
                       '<a href="{}">failing turns</a>', dashboard, turns, failing)


@admin.register(Agent)
class AgentAdmin(ReadOnlyAdmin):
    list_display = ["name", "project", "design", "version_number", "canary", "updated_at",
                    "links"]
    list_filter = ["project"]
    list_select_related = ["project", "design", "version", "canary_version"]
    search_fields = ["name", "id", "design__name"]
    date_hierarchy = "updated_at"
    fields = ["id", "name", "project", "design", "version", "canary", "settings_json",
              "created_by", "created_at", "updated_at", "links", "credentials",
              "rollout_timeline"]
    readonly_fields = ["version_number", "canary", "settings_json", "links", "credentials",
                       "rollout_timeline"]
    actions = ["rollback", "promote"]

    @admin.action(description="Promote the selected agents' canaries (they become the "
                              "agents' versions)")
    def promote(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        assert isinstance(request.user, User)
        for agent in queryset.select_related("version", "project", "canary_version"):
            try:
                promoted = do_promote(request.user, agent)
            except APIError as exc:
                self.message_user(request, f"{agent.name}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{agent.name} now runs version "
                                  f"{promoted.version.number} (canary promoted).",
                                  messages.SUCCESS)

    @admin.display(description="Canary")
    def canary(self, agent: Agent) -> str:
        if agent.canary_version is None:
            return "—"
        return f"version {agent.canary_version.number} at {agent.canary_percent} %"

    @admin.action(description="Roll the selected agents back to the version they ran before "
                              "(during a canary: end it, keep the version)")
    def rollback(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        assert isinstance(request.user, User)
        for agent in queryset.select_related("version", "project", "canary_version"):
            try:
                rolled = do_rollback(request.user, agent)
            except APIError as exc:
                self.message_user(request, f"{agent.name}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"{agent.name} rolled back to version "
                                  f"{rolled.version.number}.", messages.SUCCESS)

    @admin.display(description="Version")
    def version_number(self, agent: Agent) -> int:
        return agent.version.number

    @admin.display(description="Settings")
    def settings_json(self, agent: Agent) -> str:
        return format_html("<pre>{}</pre>", json.dumps(agent.settings, indent=2))

    @admin.display(description="Links")
    def links(self, agent: Agent) -> str:
        return _links(agent)

    @admin.display(description="Credentials")
    def credentials(self, agent: Agent) -> str:
        live = AgentCredential.objects.filter(agent=agent, revoked_at__isnull=True).count()
        url = (f"{reverse('admin:deployments_agentcredential_changelist')}?"
               f"{urlencode({'agent__id__exact': agent.pk})}")
        return format_html('<a href="{}">{} live</a>', url, live)

    @admin.display(description="Rollout timeline (newest first)")
    def rollout_timeline(self, agent: Agent) -> str:
        rollouts = (Rollout.objects.filter(agent=agent).select_related("version", "deployed_by")
                    .order_by("-deployed_at", "-id")[:100])
        rows = format_html_join(
            "", "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td>"
                "<td><code>{}</code></td></tr>",
            ((r.deployed_at.strftime("%Y-%m-%d %H:%M:%S"), r.action, r.version.number,
              r.version.content_sha256[:12],
              r.deployed_by.get_username() if r.deployed_by else "—",
              json.dumps(r.settings, sort_keys=True)) for r in rollouts))
        return format_html(
            "<table><thead><tr><th>Deployed</th><th>Action</th><th>Version</th><th>Hash</th>"
            "<th>By</th><th>Settings</th></tr></thead><tbody>{}</tbody></table>", rows)


@admin.register(AgentCredential)
class AgentCredentialAdmin(ReadOnlyAdmin):
    list_display = ["agent", "created_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["agent"]
    search_fields = ["agent__name"]
    fields = ["agent", "created_at", "revoked_at"]  # never the hash
    actions = ["revoke"]

    @admin.action(description="Revoke the selected credentials")
    def revoke(self, request: HttpRequest, queryset: QuerySet[AgentCredential]) -> None:
        live = list(queryset.filter(revoked_at__isnull=True).select_related("agent__project"))
        AgentCredential.objects.filter(pk__in=[c.pk for c in live]).update(
            revoked_at=timezone.now())
        for credential in live:
            audit.record("agent.credential_revoked", project=credential.agent.project,
                         actor=request.user, target_type="agent",
                         target_id=credential.agent_id)
        self.message_user(request, f"{len(live)} credential(s) revoked.", messages.SUCCESS)


@admin.register(AgentApiKey)
class AgentApiKeyAdmin(ReadOnlyAdmin):
    list_display = ["name", "agent", "prefix", "rate_per_minute", "expires_at", "created_by",
                    "created_at", "revoked_at", "last_used_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["agent", "created_by"]
    search_fields = ["agent__name", "name", "prefix"]
    fields = ["agent", "name", "prefix", "rate_per_minute", "expires_at", "created_by",
              "created_at", "revoked_at", "last_used_at"]  # never the hash
    actions = ["revoke"]

    @admin.action(description="Revoke the selected API keys (refused from the next call)")
    def revoke(self, request: HttpRequest, queryset: QuerySet[AgentApiKey]) -> None:
        live = list(queryset.filter(revoked_at__isnull=True).select_related("agent__project"))
        assert isinstance(request.user, User)
        for key in live:
            do_revoke_key(request.user, key.agent, key)
        self.message_user(request, f"{len(live)} API key(s) revoked.", messages.SUCCESS)
