"""KIONGA_OIDC_GROUP_ROLES: the provider's groups set a person's roles in the projects
the mapping names, at each sign-in through the provider (a real one on loopback): the
highest role their groups give, none when no group maps there; projects the mapping does
not name keep the memberships invitations made. Changes are audited as the person's
own, with source oidc. A mapping that is not GROUP=PROJECT_SLUG:ROLE stops the start."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client

from kionga.models import AuditEvent, Membership, Project, Role
from kionga.oidc_group_roles import GroupRole, parse
from runner.env import EnvError
from tests.oidc_peer import Provider, through_provider
from tests.sign_in_helpers import clean_addresses  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("clean_addresses")]

MAPPING = parse(["eng=acme:editor", "eng-leads=acme:admin", "cn=ops,ou=corp=acme:viewer",
                 "support=help:viewer"])


@pytest.fixture
def mapped(product_uses: Provider, settings: Any, acme: Project) -> Provider:
    settings.KIONGA_OIDC_GROUP_ROLES = MAPPING
    Project.objects.create(slug="help", name="Help desk")
    return product_uses


def roles_of(email: str) -> dict[str, str]:
    return dict(Membership.objects.filter(user__email=email)
                .values_list("project__slug", "role"))


def test_the_parsed_mapping_splits_at_the_last_equals_and_colon() -> None:
    assert MAPPING[2] == GroupRole("cn=ops,ou=corp", "acme", "viewer")
    for bad in ["eng", "eng=acme", "=acme:viewer", "eng=:viewer", "eng=acme:"]:
        with pytest.raises(EnvError, match="GROUP=PROJECT_SLUG:ROLE"):
            parse([bad])


def test_an_unknown_role_stops_the_start(settings: Any) -> None:
    settings.KIONGA_OIDC_GROUP_ROLES = parse(["eng=acme:owner"])
    with pytest.raises(SystemCheckError, match="names no role"):
        call_command("check")


def test_groups_give_the_highest_role_and_follow_the_provider(mapped: Provider) -> None:
    mapped.person("ivy", password="ivy-corp-pw", email="ivy@example.com",
                  groups=["eng", "eng-leads", "support"])
    through_provider(Client(), "ivy", "ivy-corp-pw")
    assert roles_of("ivy@example.com") == {"acme": Role.ADMIN, "help": Role.VIEWER}

    # Taken out of the leads and of support at the provider: at her next sign-in.
    mapped.person("ivy", groups=["eng"], email="ivy@example.com")
    through_provider(Client(), "ivy", "ivy-corp-pw")
    assert roles_of("ivy@example.com") == {"acme": Role.EDITOR}
    actions = list(AuditEvent.objects.filter(details__source="oidc")
                   .order_by("id").values_list("action", "project__slug"))
    assert actions == [("member.added", "acme"), ("member.added", "help"),
                       ("member.changed", "acme"), ("member.removed", "help")]
    ivy = User.objects.get(email="ivy@example.com")
    assert set(AuditEvent.objects.filter(details__source="oidc")
               .values_list("actor", flat=True)) == {ivy.pk}


def test_projects_the_mapping_does_not_name_are_left_alone(mapped: Provider) -> None:
    other = Project.objects.create(slug="side", name="Side project")
    jo = User.objects.create_user("jo", email="jo@example.com")
    Membership.objects.create(project=other, user=jo, role=Role.ADMIN)
    Membership.objects.create(project=Project.objects.get(slug="help"), user=jo,
                              role=Role.EDITOR)
    mapped.person("jo", password="jo-corp-pw", email="jo@example.com", groups=["unmapped"])
    through_provider(Client(), "jo", "jo-corp-pw")
    # help is the provider's (no group of jo's maps there): gone; side stays.
    assert roles_of("jo@example.com") == {"side": Role.ADMIN}


def test_without_a_mapping_groups_change_nothing(product_uses: Provider,
                                                 acme: Project) -> None:
    kim = User.objects.create_user("kim", email="kim@example.com")
    Membership.objects.create(project=acme, user=kim, role=Role.VIEWER)
    product_uses.person("kim", password="kim-corp-pw", email="kim@example.com",
                        groups=["eng-leads"])
    through_provider(Client(), "kim", "kim-corp-pw")
    assert roles_of("kim@example.com") == {"acme": Role.VIEWER}
