"""Request bodies of the members and tokens routes."""

from __future__ import annotations

from rest_framework import serializers

from kionga.models import Role
from kionga.request_body import StrictCharField

ROLES = [role.value for role in Role]


class AddMemberSerializer(serializers.Serializer):
    user = StrictCharField(
        max_length=254,
        help_text="A username or email address. The person it names is invited and becomes "
                  "a member once they accept; the answer is the same whether or not it "
                  "names anyone.")
    role = serializers.ChoiceField(choices=ROLES)


class ChangeMemberSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=ROLES)


class CreateTokenSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100)
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="Omitted or null: never expires; made with a token: when that token "
                  "expires. A token may not make a token that outlives it (403).")


class UpdateTokenSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100, required=False)
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True,
        help_text="Null: never expires. Also brings every token made from this one to no "
                  "later. With a token, only an earlier expiry (403 otherwise).")
