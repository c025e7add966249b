"""Resource routes: every member lists and reads, project admins create, change and
delete. One set of views per kind (kionga.projects.resources.KINDS), so each kind's
body is documented as it is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.access import check_project_access
from kionga.errors import invalid_field
from kionga.models import Project, Role
from kionga.openapi import ERRORS, ok
from kionga.projects import openapi as doc
from kionga.projects import resource_content as content
from kionga.projects.mcp_servers import do_list_tools
from kionga.projects.resource_serializers import DocumentBody, ObjectBody
from kionga.projects.resources import (
    KIND_NAMES,
    KINDS,
    Kind,
    check_resource,
    do_create,
    do_delete,
    do_update,
    list_resources,
    mcp_tool_dicts,
)
from kionga.request_body import parse
from kionga.resource_models import Dataset, KnowledgeBase, McpServer

NO_CONTENT = {204: None, **ERRORS}
View = Callable[..., Any]


def _user(request: Request) -> User:
    assert isinstance(request.user, User)
    return request.user


def _project(request: Request, project_id: int, change: bool = False) -> Project:
    return check_project_access(request.user, project_id, Role.ADMIN if change else Role.VIEWER)


@extend_schema(parameters=[OpenApiParameter("kind", str, enum=KIND_NAMES, required=False)],
               responses={200: ok(doc.RESOURCES), **ERRORS}, operation_id="list_resources")
@api_view(["GET"])
def resources(request: Request, project_id: int) -> Response:
    project = _project(request, project_id)
    kind = request.query_params.get("kind")
    if kind is not None and kind not in KINDS:
        raise invalid_field("kind", f"One of: {', '.join(KIND_NAMES)}.")
    return Response({"resources": list_resources(project, kind)})


def _named(name: str, view: View) -> View:
    view.__name__ = view.__qualname__ = name
    return view


def kind_views(kind: Kind) -> tuple[Any, Any]:
    """(create view, detail view) of one kind."""
    shape = ok(doc.RESOURCE_OF[kind.name])

    def create(request: Request, project_id: int) -> Response:
        project = _project(request, project_id, change=True)
        values = parse(kind.body, request.data)
        return Response(kind.to_dict(do_create(_user(request), project, kind, values)),
                        status=201)

    def detail(request: Request, project_id: int, resource_id: str) -> Response:
        change = request.method != "GET"
        project = _project(request, project_id, change)
        found = check_resource(project, kind, resource_id)
        if request.method == "DELETE":
            do_delete(_user(request), project, kind, found)
            return Response(status=204)
        if request.method == "PATCH":
            body = kind.body(data=request.data, partial=True)
            body.is_valid(raise_exception=True)
            found = do_update(_user(request), project, kind, found, dict(body.validated_data))
        return Response(kind.to_dict(found))

    create_view = extend_schema(request=kind.body, responses={201: shape, **ERRORS},
                                operation_id=f"create_{kind.name}")(
        api_view(["POST"])(_named(f"create_{kind.name}", create)))
    detail_view: Any = api_view(["GET", "PATCH", "DELETE"])(
        _named(f"{kind.name}_detail", detail))
    detail_view = extend_schema(methods=["GET"], responses={200: shape, **ERRORS},
                                operation_id=f"get_{kind.name}")(detail_view)
    detail_view = extend_schema(methods=["PATCH"], request=kind.body(partial=True),
                                responses={200: shape, **ERRORS},
                                operation_id=f"update_{kind.name}")(detail_view)
    detail_view = extend_schema(methods=["DELETE"], responses=NO_CONTENT,
                                operation_id=f"delete_{kind.name}")(detail_view)
    return create_view, detail_view


def _knowledge_base(request: Request, project_id: int, resource_id: str,
                    change: bool) -> tuple[Project, KnowledgeBase]:
    project = _project(request, project_id, change)
    found: KnowledgeBase = check_resource(project, KINDS["knowledge_base"], resource_id)
    return project, found


@extend_schema(methods=["GET"], responses={200: ok(doc.DOCUMENTS), **ERRORS},
               operation_id="list_documents")
@extend_schema(methods=["POST"], request=DocumentBody,
               responses={201: ok(doc.DOCUMENT), **ERRORS}, operation_id="add_document")
@api_view(["GET", "POST"])
def documents(request: Request, project_id: int, resource_id: str) -> Response:
    project, knowledge_base = _knowledge_base(request, project_id, resource_id,
                                              request.method == "POST")
    if request.method == "GET":
        return Response({"documents": content.documents_of(knowledge_base)})
    body = parse(DocumentBody, request.data)
    added = content.do_add_document(_user(request), project, knowledge_base,
                                    body.get("title", ""), body["text"])
    return Response(content.document_dict(added, full=True), status=201)


@extend_schema(responses=NO_CONTENT, operation_id="remove_document")
@api_view(["DELETE"])
def document(request: Request, project_id: int, resource_id: str,
             document_id: int) -> Response:
    project, knowledge_base = _knowledge_base(request, project_id, resource_id, True)
    content.do_remove_document(_user(request), project, knowledge_base, document_id)
    return Response(status=204)


@extend_schema(methods=["GET"], responses={200: ok(doc.MCP_TOOLS), **ERRORS},
               operation_id="list_mcp_tools")
@extend_schema(methods=["POST"], request=None, responses={200: ok(doc.MCP_TOOLS), **ERRORS},
               operation_id="refresh_mcp_tools")
@api_view(["GET", "POST"])
def mcp_tools(request: Request, project_id: int, resource_id: str) -> Response:
    """GET: the stored listing; POST (admin): list the server's tools now (tools/list)."""
    project = _project(request, project_id, request.method == "POST")
    server: McpServer = check_resource(project, KINDS["mcp_server"], resource_id)
    if request.method == "POST":
        server = do_list_tools(_user(request), project, server)
    listed = server.tools_listed_at.isoformat() if server.tools_listed_at else None
    return Response({"tools": mcp_tool_dicts(server), "tools_listed_at": listed})


KEY = OpenApiParameter("key", str, required=False,
                       description="GET: one object (else the keys); DELETE: required.")


@extend_schema(methods=["GET"], parameters=[KEY],
               responses={200: ok({"anyOf": [doc.OBJECT_KEYS, doc.OBJECT]}), **ERRORS},
               operation_id="read_objects")
@extend_schema(methods=["PUT"], request=ObjectBody,
               responses={200: ok(doc.OBJECT), 201: ok(doc.OBJECT), **ERRORS},
               operation_id="put_object")
@extend_schema(methods=["DELETE"], parameters=[KEY], responses=NO_CONTENT,
               operation_id="delete_object")
@api_view(["GET", "PUT", "DELETE"])
def objects(request: Request, project_id: int, resource_id: str) -> Response:
    project = _project(request, project_id, request.method != "GET")
    dataset: Dataset = check_resource(project, KINDS["dataset"], resource_id)
    if request.method == "PUT":
        body = parse(ObjectBody, request.data)
        created = content.do_put_object(_user(request), project, dataset, body["key"],
                                        body["value"])
        return Response({"key": body["key"], "value": body["value"]},
                        status=201 if created else 200)
    key = request.query_params.get("key")
    if request.method == "GET" and key is None:
        return Response({"keys": content.object_keys(dataset)})
    if not key:
        raise invalid_field("key", "Send the object's key as ?key=.")
    if request.method == "DELETE":
        content.do_delete_object(_user(request), project, dataset, key)
        return Response(status=204)
    found = content.check_object(dataset, key)
    return Response({"key": found.key, "value": found.value})
