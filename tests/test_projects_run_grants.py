"""Removing (or demoting) a member through the API ends their live runs' grants: the run
credential still authenticates, but the next resource call is 403 resource_denied
(runs.run_auth re-reads the membership on every call)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from kionga.models import Project
from kionga.resource_models import KnowledgeBase, KnowledgeDocument
from tests.conftest import Api
from tests.internal_helpers import BASE, INTERNAL_URLS, run_client, start_run
from tests.projects_helpers import members_url


def search(credential: str) -> object:
    with override_settings(ROOT_URLCONF=INTERNAL_URLS):
        return run_client(credential).post(BASE + "knowledge-bases/faq/search",
                                           {"query": "refund", "limit": 3})


@pytest.mark.parametrize("change", ["remove", "demote"])
def test_the_next_resource_call_of_a_live_run_is_denied(
        api: Api, acme: Project, alice: User, carol: User, change: str) -> None:
    kb = KnowledgeBase.objects.create(project=acme, key="faq")
    KnowledgeDocument.objects.create(knowledge_base=kb, title="Refunds", text="refund policy")
    _, credential = start_run(carol, acme)
    before = search(credential)
    assert before.status_code == 200, before.content  # type: ignore[attr-defined]
    admin = api.client_for(alice)
    url = f"{members_url(acme)}/{carol.pk}"
    answer = admin.delete(url) if change == "remove" else admin.patch(
        url, {"role": "viewer"}, format="json")
    assert answer.status_code in (200, 204)
    api.assert_error(search(credential), 403, "resource_denied")
