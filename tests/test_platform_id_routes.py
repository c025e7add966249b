"""Routes that take an ID: a malformed ID and another tenant's ID are both a JSON 404.

IDs are matched by Django's ``<uuid:…>`` converter, so a malformed one is an unknown
URL (kionga.middleware renders it); another project's object is hidden by the access
checks. Neither says whether the object exists.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalRequest
from kionga.models import Project
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design

DESIGN = "/api/v1/agent-designs/{design}"
RUN = DESIGN + "/runs/{run}"
APPROVAL = "/api/v1/agent-approvals/{approval}"
ROUTES = [
    ("get", DESIGN), ("put", DESIGN), ("post", DESIGN + "/validate"),
    ("get", DESIGN + "/runs"), ("post", DESIGN + "/runs"),
    ("get", RUN), ("get", RUN + "/events"), ("post", RUN + "/cancel"),
    ("get", APPROVAL), ("post", APPROVAL + "/decision"),
]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# Not an ID, whatever it is: no "/" (another route), no NUL (400 before routing), not
# the names of the fixed design routes.
malformed = st.text(min_size=1, max_size=40).filter(
    lambda t: "/" not in t and "\x00" not in t and not UUID.fullmatch(t)
    and t not in {"components", "templates", "validate"})


@pytest.fixture
def ids(alice: User, acme: Project) -> dict[str, str]:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice, status="completed")
    approval = ApprovalRequest.objects.create(project=acme, run=run, node_id="gate",
                                              expires_at=timezone.now() + timedelta(minutes=5))
    return {"design": str(design.pk), "run": str(run.pk), "approval": str(approval.pk)}


def slots(template: str) -> list[str]:
    return re.findall(r"\{(\w+)\}", template)


def call(client: Client, method: str, url: str, token: str, **headers: Any) -> Any:
    return client.generic(method.upper(), url, "{}", content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {token}", **headers)


def test_it_answers_a_malformed_id_with_json_404(api: Api, alice: User,
                                                 ids: dict[str, str]) -> None:
    client, token = Client(), api.token_for(alice)

    @settings(max_examples=80, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(route=st.sampled_from(ROUTES), segment=malformed, data=st.data())
    def check(route: tuple[str, str], segment: str, data: st.DataObject) -> None:
        method, template = route
        bad = data.draw(st.sampled_from(slots(template)))
        url = template.format(**{**ids, bad: quote(segment, safe="")})
        api.assert_error(call(client, method, url, token), 404, "not_found")

    check()


@pytest.mark.parametrize(("method", "template"), ROUTES)
def test_it_hides_another_tenants_object(api: Api, mallory: User, ids: dict[str, str],
                                         method: str, template: str) -> None:
    response = call(Client(), method, template.format(**ids), api.token_for(mallory))
    api.assert_error(response, 404, "not_found")


@pytest.mark.django_db(transaction=True)  # the stream gives its connection back early
def test_it_answers_json_404_on_the_event_stream_too(api: Api, alice: User, mallory: User,
                                                    ids: dict[str, str]) -> None:
    stream = {"HTTP_ACCEPT": "text/event-stream"}
    url = RUN.format(**ids) + "/events"
    api.assert_error(call(Client(), "get", url, api.token_for(mallory), **stream), 404,
                     "not_found")
    garbage = RUN.format(**{**ids, "run": "not-a-uuid"}) + "/events"
    api.assert_error(call(Client(), "get", garbage, api.token_for(alice), **stream), 404,
                     "not_found")
