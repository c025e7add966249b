"""Internal routes a run credential may call: parse, one action, the contract's JSON.

The routes that call an upstream are coroutines, served on the internal listener's
event loop (runs.loop_view); the database-only ones are ordinary views.
"""

from __future__ import annotations

from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.knowledge import search_documents
from kionga.loop_handler import EventStream
from kionga.request_body import parse
from kionga.resource_models import ApiConnection, Dataset, KnowledgeBase, ModelEndpoint
from runs.internal import actions, checks
from runs.internal import openapi as doc
from runs.internal.serializers import (
    ConnectionCallSerializer,
    InvokeSerializer,
    PredictSerializer,
    SearchSerializer,
)
from runs.run_auth import RouteResource, route_resource, run_of, run_view


@run_view(["POST"], RouteResource(ModelEndpoint, "model", "model_id"), request=PredictSerializer,
          responses=doc.answers(200, doc.PREDICT), operation_id="internal_predict")
async def predict(request: Request, model_id: str) -> HttpResponseBase:
    """The completion as JSON, or as it is written with `Accept: text/event-stream`
    (events `delta`, then `done` or `error`: runs.internal.actions.do_stream_predict)."""
    run = run_of(request)
    endpoint: ModelEndpoint = await route_resource(request)
    messages = [dict(m) for m in parse(PredictSerializer, request.data)["messages"]]
    if "text/event-stream" in request.headers.get("Accept", ""):
        events = await actions.do_stream_predict(run, endpoint, messages)
        return EventStream(events, headers={"Cache-Control": "no-cache"})
    return Response(await actions.do_predict(run, endpoint, messages))


@run_view(["POST"], request=InvokeSerializer,
          responses=doc.answers(200, doc.INVOKE), operation_id="internal_invoke_function")
async def invoke_function(request: Request, name: str) -> Response:
    body = parse(InvokeSerializer, request.data)
    return Response(await actions.do_invoke_function(run_of(request), name, body["input"]))


@run_view(["POST"], RouteResource(ApiConnection, "connection", "connection_id"),
          request=ConnectionCallSerializer,
          responses=doc.answers(200, doc.CONNECTION), operation_id="internal_invoke_connection")
async def invoke_connection(request: Request, connection_id: str) -> Response:
    run = run_of(request)
    checks.check_side_effects(run, f"API connection {connection_id!r}")
    connection: ApiConnection = await route_resource(request)
    call = parse(ConnectionCallSerializer, request.data)
    url = checks.check_connection_call(connection, call["method"], call["path"])
    return Response(await actions.do_invoke_connection(connection, call["method"], url,
                                                       call["body"]))


@run_view(["GET"], responses=doc.answers(200, doc.KNOWLEDGE_BASES),
          operation_id="internal_knowledge_bases")
def knowledge_bases(request: Request) -> Response:
    # Only those of the run's graph: the run may search no other.
    run = run_of(request)
    found = KnowledgeBase.objects.filter(
        project_id=run.project_id, key__in=checks.in_scope(run, "knowledge_base")
    ).order_by("key")
    return Response({"knowledge_bases": [{"id": kb.key, "name": kb.name or kb.key}
                                         for kb in found]})


@run_view(["POST"], request=SearchSerializer,
          responses=doc.answers(200, doc.SEARCH), operation_id="internal_search_knowledge")
def search_knowledge(request: Request, knowledge_base_id: str) -> Response:
    run = run_of(request)
    knowledge_base = checks.check_resource(run, KnowledgeBase, "knowledge_base",
                                           knowledge_base_id)
    search = parse(SearchSerializer, request.data)
    return Response({"documents": search_documents(knowledge_base, search["query"],
                                                   search["limit"])})


@run_view(["GET"], parameters=[OpenApiParameter("key", str, required=True)],
          responses=doc.answers(200, doc.OBJECT), operation_id="internal_read_object")
def read_object(request: Request, dataset_id: str) -> Response:
    dataset = checks.check_resource(run_of(request), Dataset, "dataset", dataset_id)
    key = checks.check_object_key(request.query_params)
    return Response(actions.read_object(dataset, key))
