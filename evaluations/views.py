"""Evaluations API: fixtures, suggestions, evaluations and reviews. Thin views that
parse, call one action, answer."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from designs.actions import check_design_access
from evaluations import actions, fixtures
from evaluations import openapi as doc
from evaluations.progress import do_cancel_evaluation
from evaluations.serializers import (
    OneCaseSerializer,
    PutFixturesSerializer,
    ReviewSerializer,
    StartEvaluationSerializer,
    SuggestSerializer,
)
from evaluations.start import StartEvaluation, do_start_evaluation
from evaluations.summary import case_dict, evaluation_dict
from kionga.access import check_role
from kionga.errors import invalid_field
from kionga.models import Role
from kionga.openapi import answers
from kionga.request_body import parse


@extend_schema(methods=["GET"], responses=answers(200, doc.FIXTURES),
               operation_id="get_fixtures")
@extend_schema(methods=["PUT"], request=PutFixturesSerializer,
               responses=answers(200, doc.FIXTURES), operation_id="put_fixtures")
@api_view(["GET", "PUT"])
def design_fixtures(request: Request, design_id: uuid.UUID) -> Response:
    if request.method == "GET":
        return Response(fixtures.fixtures_dict(check_design_access(request.user, design_id)))
    design = check_design_access(request.user, design_id, Role.EDITOR)
    body = parse(PutFixturesSerializer, request.data)
    cases = fixtures.check_cases(design, body["cases"])
    assert isinstance(request.user, User)
    fixtures.do_put_fixtures(request.user, design, body["revision"], cases)
    return Response(fixtures.fixtures_dict(design))


@extend_schema(request=OneCaseSerializer, responses=answers(201, doc.ONE_CASE),
               operation_id="add_fixture_case")
@api_view(["POST"])
def fixture_cases(request: Request, design_id: uuid.UUID) -> Response:
    design = check_design_access(request.user, design_id, Role.EDITOR)
    case = fixtures.check_case_body(design, parse(OneCaseSerializer, request.data))
    assert isinstance(request.user, User)
    revision, stored = fixtures.do_add_case(request.user, design, case)
    return Response(fixtures.case_answer(design, revision, stored), status=201)


@extend_schema(methods=["PUT"], request=OneCaseSerializer, responses=answers(200, doc.ONE_CASE),
               operation_id="update_fixture_case")
@extend_schema(methods=["DELETE"], request=None, responses=answers(200, doc.DELETED_CASE),
               operation_id="delete_fixture_case")
@api_view(["PUT", "DELETE"])
def fixture_case(request: Request, design_id: uuid.UUID, case_id: str) -> Response:
    design = check_design_access(request.user, design_id, Role.EDITOR)
    assert isinstance(request.user, User)
    if request.method == "DELETE":
        revision = fixtures.do_delete_case(request.user, design, case_id)
        return Response({"design_id": str(design.pk), "revision": revision,
                         "deleted": case_id})
    case = fixtures.check_case_body(design, parse(OneCaseSerializer, request.data))
    revision, stored = fixtures.do_update_case(request.user, design, case_id, case)
    return Response(fixtures.case_answer(design, revision, stored))


@extend_schema(request=SuggestSerializer, responses=answers(200, doc.SUGGESTIONS),
               operation_id="suggest_fixtures")
@api_view(["POST"])
def suggest(request: Request, design_id: uuid.UUID) -> Response:
    """Viewers may ask for proposals; saving them takes an editor."""
    design = check_design_access(request.user, design_id)
    body = parse(SuggestSerializer, request.data)
    if body["save"]:
        check_role(getattr(design, "caller_role", None), Role.EDITOR, "Design not found.")
    proposals = fixtures.suggestions(design)
    if not body["save"]:
        return Response({"suggestions": proposals, "saved": []})
    if body["revision"] is None:
        raise invalid_field("revision", "Send the fixtures revision you read to save.")
    assert isinstance(request.user, User)
    saved = fixtures.do_save_suggestions(request.user, design, body["revision"], proposals)
    revision = fixtures.fixtures_dict(design)["revision"]
    return Response({"suggestions": proposals, "saved": saved, "revision": revision})


@extend_schema(methods=["GET"], responses=answers(200, doc.EVALUATION_LIST),
               operation_id="list_evaluations")
@extend_schema(methods=["POST"], request=StartEvaluationSerializer,
               responses=answers(201, doc.EVALUATION), operation_id="start_evaluation")
@api_view(["GET", "POST"])
def design_evaluations(request: Request, design_id: uuid.UUID) -> Response:
    if request.method == "GET":
        design = check_design_access(request.user, design_id)
        return Response({"evaluations": [evaluation_dict(e, cases, with_cases=False)
                                         for e, cases in actions.evaluations_of(design)]})
    design = check_design_access(request.user, design_id, Role.EDITOR)
    start = StartEvaluation.of(parse(StartEvaluationSerializer, request.data))
    assert isinstance(request.user, User)
    evaluation = do_start_evaluation(request.user, design, start)
    return Response(evaluation_dict(evaluation, actions.cases_of(evaluation)), status=201)


@extend_schema(responses=answers(200, doc.EVALUATION), operation_id="get_evaluation")
@api_view(["GET"])
def evaluation(request: Request, evaluation_id: uuid.UUID) -> Response:
    found = actions.check_evaluation_access(request.user, evaluation_id)
    return Response(evaluation_dict(found, actions.cases_of(found)))


@extend_schema(request=None, responses=answers(202, doc.EVALUATION),
               operation_id="cancel_evaluation")
@api_view(["POST"])
def cancel(request: Request, evaluation_id: uuid.UUID) -> Response:
    found = actions.check_evaluation_access(request.user, evaluation_id, Role.EDITOR)
    assert isinstance(request.user, User)
    cancelled = do_cancel_evaluation(request.user, found)
    return Response(evaluation_dict(cancelled, actions.cases_of(cancelled)), status=202)


@extend_schema(request=ReviewSerializer, responses=answers(200, doc.CASE_RESULT),
               operation_id="review_evaluation_case")
@api_view(["POST"])
def review(request: Request, evaluation_id: uuid.UUID, case_id: str) -> Response:
    found = actions.check_evaluation_access(request.user, evaluation_id, Role.EDITOR)
    case = actions.check_case(found, case_id)
    body = parse(ReviewSerializer, request.data)
    assert isinstance(request.user, User)
    return Response(case_dict(actions.do_review(request.user, case, body["status"],
                                                body["note"])))
