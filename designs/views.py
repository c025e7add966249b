"""Designs API: thin views that parse, call one action and return a dict."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from contracts.registry import registry_document
from designs import actions, pins
from designs import diff as diffs
from designs import openapi as doc
from designs.serializers import (
    CreateDesignSerializer,
    RestoreRevisionSerializer,
    SaveDesignSerializer,
    SetPinSerializer,
)
from designs.starter_templates import template_list
from designs.validation import revision_report
from kionga.access import check_project_access
from kionga.models import Role
from kionga.openapi import ERRORS, json_body, ok
from kionga.request_body import parse


@extend_schema(responses={200: ok(doc.REGISTRY)}, operation_id="components")
@api_view(["GET"])
def components(request: Request) -> Response:
    return Response(registry_document())


@extend_schema(responses={200: ok(doc.TEMPLATE_LIST)}, operation_id="templates")
@api_view(["GET"])
def templates(request: Request) -> Response:
    return Response({"templates": template_list()})


@extend_schema(request=json_body(doc.UNSAVED_GRAPH),
               responses={200: ok(doc.REPORT), **ERRORS},
               operation_id="validate_graph")
@api_view(["POST"])
def validate_unsaved(request: Request) -> Response:
    body = actions.check_graph_document(actions.graph_body(request))
    project = None
    if body.get("project_id") is not None:
        project = check_project_access(request.user, body["project_id"])
    graph = {k: v for k, v in body.items() if k != "project_id"}
    return Response(actions.graph_report(graph, project).to_dict())


@extend_schema(
    methods=["GET"],
    parameters=[OpenApiParameter("project_id", int, required=False)],
    responses={200: ok(doc.DESIGN_LIST), **ERRORS},
    operation_id="list_designs",
)
@extend_schema(methods=["POST"], request=CreateDesignSerializer,
               responses={201: ok(doc.DESIGN), **ERRORS}, operation_id="create_design")
@api_view(["GET", "POST"])
def designs(request: Request) -> Response:
    if request.method == "GET":
        found = actions.design_list(request.user, request.query_params.get("project_id"))
        return Response({"designs": [actions.design_dict(d, with_graph=False) for d in found]})
    body = parse(CreateDesignSerializer, request.data)
    project = check_project_access(request.user, body["project_id"], Role.EDITOR)
    graph = body.get("graph")
    graph = actions.check_graph_document(graph) if graph is not None else actions.EMPTY_GRAPH
    assert isinstance(request.user, User)
    design = actions.do_create_design(request.user, project, body["name"],
                                      body.get("description") or "", graph,
                                      body["require_evaluation"])
    return Response(actions.design_dict(design), status=201)


@extend_schema(methods=["GET"], responses={200: ok(doc.DESIGN), **ERRORS},
               operation_id="get_design")
@extend_schema(methods=["PUT"], request=SaveDesignSerializer,
               responses={200: ok(doc.DESIGN), **ERRORS}, operation_id="save_design")
@api_view(["GET", "PUT"])
def design(request: Request, design_id: uuid.UUID) -> Response:
    if request.method == "GET":
        return Response(actions.design_dict(actions.check_design_access(request.user, design_id)))
    found = actions.check_design_access(request.user, design_id, Role.EDITOR)
    body = parse(SaveDesignSerializer, request.data)
    graph = actions.check_graph_document(body["graph"]) if "graph" in body else None
    assert isinstance(request.user, User)
    saved = actions.do_change_design(request.user, found, actions.DesignChange(
        body["revision"], graph, body.get("name"), body.get("description"),
        body["require_evaluation"]))
    return Response(actions.design_dict(saved))


@extend_schema(request=json_body(doc.GRAPH),
               responses={200: ok(doc.REPORT), **ERRORS},
               operation_id="validate_design")
@api_view(["POST"])
def validate_saved(request: Request, design_id: uuid.UUID) -> Response:
    found = actions.check_design_access(request.user, design_id)
    body: Any = actions.graph_body(request)
    if body in (None, {}) or body == b"":
        return Response(revision_report(found.current(), found.project).to_dict())
    graph = actions.check_graph_document(body)
    return Response(actions.graph_report(graph, found.project).to_dict())


FROM = OpenApiParameter("from", str, required=True,
                        description="A revision number (3) or a version of the design (v2).")
TO = OpenApiParameter("to", str, required=True, description="As `from`.")


@extend_schema(parameters=[FROM, TO], responses={200: ok(doc.DIFF), **ERRORS},
               operation_id="diff_design")
@api_view(["GET"])
def diff(request: Request, design_id: uuid.UUID) -> Response:
    return Response(diffs.check_diff(request.user, design_id, request.query_params.get("from"),
                                     request.query_params.get("to")))


@extend_schema(request=RestoreRevisionSerializer, responses={200: ok(doc.DESIGN), **ERRORS},
               operation_id="restore_revision")
@api_view(["POST"])
def restore(request: Request, design_id: uuid.UUID, number: int) -> Response:
    body = parse(RestoreRevisionSerializer, request.data)
    assert isinstance(request.user, User)
    saved = diffs.do_restore_revision(request.user, design_id, number, body["revision"])
    return Response(actions.design_dict(saved))


@extend_schema(responses={200: ok(doc.PIN_LIST), **ERRORS}, operation_id="list_pins")
@api_view(["GET"])
def pin_list(request: Request, design_id: uuid.UUID) -> Response:
    return Response(pins.pins_of(request.user, design_id))


@extend_schema(methods=["PUT"], request=SetPinSerializer,
               responses={200: ok(doc.PIN), **ERRORS}, operation_id="set_pin")
@extend_schema(methods=["DELETE"], responses={204: None, **ERRORS}, operation_id="clear_pin")
@api_view(["PUT", "DELETE"])
def pin(request: Request, design_id: uuid.UUID, node_id: str) -> Response:
    assert isinstance(request.user, User)
    if request.method == "DELETE":
        pins.do_clear_pin(request.user, design_id, node_id)
        return Response(status=204)
    body = parse(SetPinSerializer, request.data)
    return Response(pins.do_set_pin(request.user, design_id, node_id, body["port"],
                                    body["value"]))
