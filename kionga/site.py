"""The product's web entry points, declared once: the landing page at /, the designer's
header and the approver UI's header link to them (by URL name, so the platform imports
no app), and the API's root lists the API's own (kionga.api_root)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest
from django.urls import reverse

from kionga import oidc


@dataclass(frozen=True)
class SiteLink:
    name: str
    label: str
    url: str
    description: str


# (name, label, URL name, description); the admin only for people it lets in.
_EVERYONE = (
    ("designer", "Designer", "designer:home",
     "Design agent graphs, validate and run them, publish versions."),
    ("approvals", "Approvals", "approver:list",
     "Decide the requests your projects' agents wait on."),
    ("api_docs", "API docs", "docs", "The HTTP API of everything here (OpenAPI)."),
)
_STAFF = (("admin", "Admin", "admin:index", "Projects, members, tokens and operations."),)


def may_use_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    # What the admin's own login checks (AdminSite.has_permission).
    return bool(user.is_active and getattr(user, "is_staff", False))


def site_links(user: AbstractBaseUser | AnonymousUser) -> list[SiteLink]:
    """The pages this person may open, in the order every header shows them."""
    entries = _EVERYONE + (_STAFF if may_use_admin(user) else ())
    return [SiteLink(name, label, reverse(url_name), description)
            for name, label, url_name, description in entries]


def site_config(user: AbstractBaseUser | AnonymousUser) -> dict[str, Any]:
    """The links as data, for pages whose header is drawn by a script (the canvas)."""
    return {"home": reverse("home"), "sign_out": reverse("sign-out"),
            "links": [asdict(link) for link in site_links(user)]}


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context processor: ``site_links``, computed only where a template uses
    it; ``sign_in_provider``, the provider's name when sign-in through it is on."""
    return {"site_links": partial(site_links, request.user),
            "sign_in_provider": oidc.provider_name() if oidc.enabled() else None}
