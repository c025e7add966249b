"""Admin for ops staff. Raw tokens are never shown (they are not stored)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from kionga import token_lineage
from kionga.errors import APIError
from kionga.models import (
    ApiToken,
    AuditEvent,
    Invitation,
    Membership,
    Project,
    TokenRevocation,
    TokenUse,
)
from kionga.projects import invitations
from kionga.projects.token_actions import do_revoke_all_tokens

# The sign-in page with "Sign in with <provider>" when that is on (kionga.oidc).
admin.site.login_template = "kionga/admin_login.html"


admin.site.unregister(User)


@admin.register(User)
class PersonAdmin(UserAdmin):  # type: ignore[type-arg]
    """Django's user pages, with ending every API token of the selected people in one
    action (e.g. someone removed at the identity provider: their next sign-in there is
    refused, and this ends what they could still do with tokens)."""

    actions = ["revoke_all_tokens"]

    @admin.action(description="Revoke every API token of the selected people")
    def revoke_all_tokens(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        assert isinstance(request.user, User)  # the admin site signs staff in
        ended = sum(do_revoke_all_tokens(request.user, person) for person in queryset)
        self.message_user(request, f"Revoked {ended} token(s) of {queryset.count()} "
                                   "person(s).", messages.SUCCESS)


# Ops staff add members directly here (and `manage.py bootstrap` does): project admins
# invite through the API instead (docs/decisions/members-join-by-invitation.md).
class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["id", "slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role"]
    list_filter = ["role", "project"]
    autocomplete_fields = ["user", "project"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    # Tokens are issued by `manage.py bootstrap` or the API; here only revoke.
    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "expires_at",
                    "revoked"]
    list_filter = ["revoked"]
    search_fields = ["name", "prefix", "user__username"]
    fields = ["user", "name", "prefix", "token_hash", "created_at", "last_used_at",
              "expires_at", "revoked", "parent"]
    readonly_fields = ["user", "name", "prefix", "token_hash", "created_at", "last_used_at",
                       "parent"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApiToken, form: ModelForm[ApiToken],
                   change: bool) -> None:
        # The API's rules: a revocation or an expiry covers the tokens made from this one.
        super().save_model(request, obj, form, change)
        if "revoked" in form.changed_data and obj.revoked:
            token_lineage.revoke(obj)
        if "expires_at" in form.changed_data:
            token_lineage.set_expiry(obj, obj.expires_at, narrow_only=False)


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """A page ops staff may look at but never change: every field read-only, no add,
    change or delete (records whose edits would skip checks or falsify history)."""

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # The model's fields, and whatever computed fields the page declares.
        names = [*self.readonly_fields, *(field.name for field in self.model._meta.fields)]
        return list(dict.fromkeys(names))

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    # An audit log that staff could edit would prove nothing: read-only.
    list_display = ["created_at", "action", "project", "actor", "target_type", "target_id"]
    list_filter = ["action", "project"]
    search_fields = ["action", "target_id"]

# Resource pages live beside their models; importing registers them.
import kionga.resource_admin  # noqa: E402,F401


@admin.register(TokenRevocation)
class TokenRevocationAdmin(ReadOnlyAdmin):
    # Written by project admins (DELETE projects/{id}/tokens/{token_id}); a record of it.
    list_display = ["created_at", "token", "project", "revoked_by"]
    list_filter = ["project"]


@admin.register(TokenUse)
class TokenUseAdmin(ReadOnlyAdmin):
    # Written on each token's requests (kionga.token_use): what project admins list.
    list_display = ["last_used_at", "token", "project"]
    list_filter = ["project"]


class InviteForm(ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Invitation
        fields = ["project", "address", "role"]
        labels = {"address": "User name or email address"}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("project") and cleaned.get("address"):
            try:
                invitations.check_not_member(cleaned["project"], cleaned["address"])
            except APIError as error:
                raise ValidationError(error.message) from None
        return cleaned


@admin.register(Invitation)
class InvitationAdmin(ReadOnlyAdmin):
    # Made by project admins through the API, answered by the person invited: staff
    # look and may revoke; they add members directly under Memberships instead.
    list_display = ["created_at", "project", "address", "invitee", "role", "status",
                    "expires_at", "invited_by"]
    list_filter = ["status", "role", "project"]
    search_fields = ["address", "invitee__username"]
    actions = ["revoke"]
    # Staff may invite too (a project, a user name or email address, a role): the same
    # action as the API's, so an address with no account gets its set-password link.
    add_fields = ["project", "address", "role"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.has_perm("kionga.add_invitation"))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else super().get_readonly_fields(request, obj)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.add_fields if obj is None else super().get_fields(request, obj)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False,
                 **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = InviteForm
        return super().get_form(request, obj, change, **kwargs)

    def save_model(self, request: HttpRequest, obj: Invitation, form: Any,
                   change: bool) -> None:
        assert isinstance(request.user, User) and not change  # only added here
        obj.pk = invitations.do_invite(request.user, obj.project, obj.address, obj.role).pk

    @admin.action(description="Revoke the selected pending invitations")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Invitation]) -> None:
        assert isinstance(request.user, User)  # the admin site signs staff in
        pending = list(queryset.filter(status=Invitation.Status.PENDING))
        for invitation in pending:
            invitations.do_revoke(request.user, invitation.project, invitation.pk)
        self.message_user(request, f"Revoked {len(pending)} invitation(s).", messages.SUCCESS)
