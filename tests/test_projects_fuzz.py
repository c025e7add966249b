"""Fuzz the members, tokens and resources routes from the OpenAPI document with each
role's token: no request may produce a 5xx, and every invalid_request names its fields."""

from __future__ import annotations

from datetime import timedelta

import schemathesis
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kionga.models import ApiToken, Invitation, Project
from kionga.resource_models import Dataset, KnowledgeBase, KnowledgeDocument, ModelEndpoint
from kionga.tokens import issue_token
from tests.conftest import Api
from tests.fuzz_kit import send_and_check
from tests.openapi_check import openapi_document

# About 15 a route over ~42 routes, each with one of three roles' tokens.
MAX_EXAMPLES = 600


def operations() -> list[tuple[str, str]]:
    paths = openapi_document("kionga.urls")["paths"]
    return sorted((path, method.upper()) for path, item in paths.items()
                  for method in item if method in {"get", "post", "put", "patch", "delete"}
                  and (path.startswith("/api/v1/projects/") or path.startswith("/api/v1/me/")))


def test_it_covers_every_new_route() -> None:
    # me/tokens 4, me/invitations 3, members 4, project invitations 2, project tokens 2,
    # resources 1 + 4 per kind (6 kinds), documents 3, objects 3, MCP tools 2, notices 1.
    assert len(operations()) == 49


def test_it_never_answers_5xx(api: Api, acme: Project, alice: User, carol: User,
                              bob: User) -> None:
    # One test drawing the route too: the fixtures are made once, not once per route.
    schema = schemathesis.openapi.from_dict(openapi_document("kionga.urls"))
    strategies = {(path, method): schema[path][method].as_strategy()
                  for path, method in operations()}
    ModelEndpoint.objects.create(project=acme, key="gpt", base_url="https://x.example/",
                                 model_name="m", secret="s")
    kb = KnowledgeBase.objects.create(project=acme, key="faq")
    doc = KnowledgeDocument.objects.create(knowledge_base=kb, text="t")
    Dataset.objects.create(project=acme, key="prices")
    issue_token(carol, "spare")
    spare = ApiToken.objects.get(name="spare")
    invitation = Invitation.objects.create(project=acme, address="dave", role="viewer",
                                           expires_at=timezone.now() + timedelta(days=1))
    real = {"project_id": acme.pk, "user_id": bob.pk, "token_id": spare.pk,
            "document_id": doc.pk, "invitation_id": str(invitation.pk)}
    resource_ids = {"model": "gpt", "knowledge_base": "faq", "dataset": "prices"}
    tokens = [issue_token(person, "fuzz") for person in (alice, carol, bob)]
    client = Client()

    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(route=st.sampled_from(sorted(strategies)), data=st.data(),
           use_real_ids=st.booleans(), raw=st.booleans(), token=st.sampled_from(tokens))
    def check(route: tuple[str, str], data: st.DataObject, use_real_ids: bool, raw: bool,
              token: str) -> None:
        path, method = route
        case = data.draw(strategies[route])
        params = dict(case.path_parameters or {})
        if use_real_ids:
            kind = path.split("/resources/")[-1].split("/")[0]
            params.update({k: v for k, v in real.items() if k in params})
            if "resource_id" in params:
                params["resource_id"] = resource_ids.get(kind, "gpt")
        send_and_check(client, method, path, case, params, token, raw)

    check()
