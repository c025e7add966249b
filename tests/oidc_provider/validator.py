"""The claims this provider tells about a person: email (with email_verified) and the
names of their groups in ``groups`` (given for the ``groups`` scope)."""

from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator

from tests.oidc_provider.state import email_verified


class ClaimsValidator(OAuth2Validator):  # type: ignore[misc]
    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "groups"}

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {"email": user.email, "email_verified": email_verified(user),
                "given_name": user.first_name, "family_name": user.last_name,
                "groups": sorted(user.groups.values_list("name", flat=True))}
