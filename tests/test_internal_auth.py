"""Run-credential authentication of the internal listener: 401 invalid_credential for
anything but a live run credential, 403 resource_denied once the starter lost the grant."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from kionga.models import Membership, Project, Role
from runs.credentials import CREDENTIAL_MAX_AGE, revoke_credential
from runs.models import Run, RunCredential
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")

KBS = BASE + "knowledge-bases"


def test_it_accepts_a_live_run_credential(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    response = run_client(raw).get(KBS)
    assert response.status_code == 200, response.content


def test_it_rejects_a_request_without_credential(api: Api, carol: User) -> None:
    response = api.anon().get(KBS)
    api.assert_error(response, 401, "invalid_credential")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_rejects_an_unknown_credential(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    api.assert_error(run_client(raw[:-2] + "xx").get(KBS), 401, "invalid_credential")


def test_it_rejects_a_malformed_header(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw} extra")
    api.assert_error(client.get(KBS), 401, "invalid_credential")
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    api.assert_error(client.get(KBS), 401, "invalid_credential")


def test_it_rejects_a_revoked_credential(api: Api, carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    client = run_client(raw)
    assert client.get(KBS).status_code == 200
    revoke_credential(run)
    api.assert_error(client.get(KBS), 401, "invalid_credential")


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_it_rejects_the_credential_of_a_finished_run(
    api: Api, carol: User, acme: Project, status: str
) -> None:
    run, raw = start_run(carol, acme)
    Run.objects.filter(pk=run.pk).update(status=status)
    api.assert_error(run_client(raw).get(KBS), 401, "invalid_credential")


def test_it_rejects_an_expired_credential(api: Api, carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    old = timezone.now() - CREDENTIAL_MAX_AGE - timedelta(minutes=1)
    RunCredential.objects.filter(run=run).update(created_at=old)
    api.assert_error(run_client(raw).get(KBS), 401, "invalid_credential")


def test_it_rejects_an_api_token(api: Api, alice: User) -> None:
    api.assert_error(api.client_for(alice).get(KBS), 401, "invalid_credential")


def test_it_rejects_a_session(api: Api, alice: User) -> None:
    client = APIClient()
    client.force_login(alice)
    api.assert_error(client.get(KBS), 401, "invalid_credential")


def test_it_denies_the_next_call_once_the_membership_is_revoked(
    api: Api, carol: User, acme: Project
) -> None:
    _, raw = start_run(carol, acme)
    client = run_client(raw)
    assert client.get(KBS).status_code == 200
    Membership.objects.filter(user=carol, project=acme).delete()
    api.assert_error(client.get(KBS), 403, "resource_denied")


def test_it_denies_a_starter_downgraded_to_viewer(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    Membership.objects.filter(user=carol, project=acme).update(role=Role.VIEWER)
    api.assert_error(run_client(raw).get(KBS), 403, "resource_denied")


def test_it_allows_an_admin_starter(alice: User, acme: Project) -> None:
    _, raw = start_run(alice, acme)
    assert run_client(raw).get(KBS).status_code == 200


def test_it_denies_a_deactivated_starter(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    User.objects.filter(pk=carol.pk).update(is_active=False)
    api.assert_error(run_client(raw).get(KBS), 403, "resource_denied")


def test_it_denies_a_run_whose_starter_was_deleted(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    carol.delete()
    api.assert_error(run_client(raw).get(KBS), 403, "resource_denied")


def test_it_grants_nothing_in_the_starters_other_projects(
    api: Api, carol: User, acme: Project, evil: Project
) -> None:
    # Membership elsewhere does not help: the grant is the run's project only.
    Membership.objects.create(project=evil, user=carol, role=Role.ADMIN)
    _, raw = start_run(carol, acme)
    Membership.objects.filter(user=carol, project=acme).delete()
    api.assert_error(run_client(raw).get(KBS), 403, "resource_denied")
