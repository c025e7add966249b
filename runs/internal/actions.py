"""What the internal routes do with a resource of the run's project.

Each returns the JSON of runner/resources.py's contract. Upstream answers pass
through kionga.upstream.scrub with the resource's secrets before they leave.
Upstream calls are awaited on the event loop (kionga.upstream), inside the project's
and the resource's call slots; database work goes through kionga.pooled, so no
database connection is held while an upstream answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from decimal import Decimal
from typing import Any

from django.conf import settings

from kionga import mcp_client, mcp_tools, parsers, upstream
from kionga.builtin_tools import BUILTIN_TOOLS, ToolError
from kionga.errors import APIError, describe, error_body
from kionga.resource_models import (
    ApiConnection,
    Dataset,
    DatasetObject,
    Function,
    McpServer,
    ModelEndpoint,
)
from kionga.stream_end import LastChunk
from runner.redact import Redactor, StreamRedactor
from runs import bills
from runs.internal.checks import (
    check_in_scope,
    check_resource,
    check_secrets_readable,
    check_side_effects,
    missing,
)
from runs.loop_view import in_thread
from runs.models import Run

# With SLOT_WAIT, below the runner client's 30 s default, so the runner gets our clean
# 503 instead of a timeout of its own (KIONGA_MODEL_TIMEOUT_SECONDS and
# KIONGA_CALL_TIMEOUT_SECONDS are at most their defaults, kionga.settings). A streamed
# answer may take longer in all: each read waits at most MODEL_TIMEOUT, and the node's
# own timeout bounds the whole.
MODEL_TIMEOUT = float(settings.KIONGA_MODEL_TIMEOUT_SECONDS)
CALL_TIMEOUT = float(settings.KIONGA_CALL_TIMEOUT_SECONDS)
SLOT_WAIT = 4.0
COST_PLACES = Decimal("0.000001")


async def do_predict(run: Run, endpoint: ModelEndpoint,
                     messages: list[dict[str, str]]) -> dict[str, Any]:
    """One non-streaming chat completion; its tokens and cost are added to the run."""
    what = f"model {endpoint.key!r}"
    async with upstream.call_slot(run.project_id, f"model/{endpoint.key}", what, SLOT_WAIT):
        answer = upstream.check_success(what, await upstream.send(
            what, "POST", _completions_url(endpoint), project=run.project_id,
            headers=_model_headers(endpoint), timeout=MODEL_TIMEOUT,
            json_body={"model": endpoint.model_name, "messages": messages, "stream": False},
        ))
    text, prompt, completion = _completion(what, answer, messages)
    cost = await _bill(run, endpoint, prompt, completion)
    secrets = upstream.secret_values([endpoint.secret])
    # The cost goes back to the node's record (runner/records.py); the run's total is ours.
    return {"text": upstream.scrub(text, secrets),
            "usage": {"tokens": prompt + completion, "cost": float(cost)}}


async def do_stream_predict(run: Run, endpoint: ModelEndpoint,
                            messages: list[dict[str, str]]) -> AsyncGenerator[bytes, None]:
    """The completion as it is written: Server-Sent Events `delta` ({"text": piece}),
    then `done` ({"text", "usage"}, billed like do_predict) or `error` (the error
    shape; e.g. resource_unavailable when the upstream cut its answer short).

    An upstream refusal (status, unreachable) is raised before the first event, so
    it is an ordinary error answer; the events start once the upstream answers 200.
    """
    events = _stream_events(run, endpoint, messages)
    head = await anext(events)  # raises the upstream's refusal, if any
    assert head == b"", head  # the head says the answer is a success; nothing to send
    return events


async def _stream_events(run: Run, endpoint: ModelEndpoint,
                         messages: list[dict[str, str]]) -> AsyncGenerator[bytes, None]:
    what = f"model {endpoint.key!r}"
    secrets = upstream.secret_values([endpoint.secret])
    # One redactor for the deltas and the whole text (upstream.scrub's, made once).
    redactor = Redactor(secrets, builtin=False)
    scrubber = StreamRedactor(redactor, limit=upstream.MAX_ANSWER_BYTES)
    body = {"model": endpoint.model_name, "messages": messages, "stream": True,
            "stream_options": {"include_usage": True}}
    headers = {**_model_headers(endpoint), "Accept": "text/event-stream"}
    async with upstream.call_slot(run.project_id, f"model/{endpoint.key}", what, SLOT_WAIT), \
            upstream.stream(what, _completions_url(endpoint), project=run.project_id,
                            headers=headers, timeout=MODEL_TIMEOUT, json_body=body) as response:
        if not 200 <= response.status < 300 or "text/event-stream" not in response.content_type:
            # A refusal, or a server that ignored stream=true: one answer, as do_predict.
            answer = upstream.check_success(what, upstream.Answer(
                response.status, await response.read(), response.content_type, what))
            text, prompt, completion = _completion(what, answer, messages)
            yield b""  # the head: the answer is a success
            if text:
                yield sse("delta", {"text": upstream.scrub(text, secrets)})
        else:
            yield b""
            parts: list[str] = []
            usage: dict[str, Any] = {}
            try:
                async for line in upstream.lines(what, response):
                    chunk = _chunk(what, line)
                    if chunk is None:
                        continue
                    if chunk is _DONE:
                        break
                    piece, chunk_usage = _chunk_text(chunk)
                    usage = chunk_usage or usage
                    if piece:
                        parts.append(piece)
                        released = scrubber.feed(piece)
                        if released:
                            yield sse("delta", {"text": released})
            except APIError as exc:
                code, message, details = describe(exc)
                yield LastChunk(sse("error", error_body(code, message, details)))
                return
            rest = scrubber.flush()
            if rest:
                yield sse("delta", {"text": rest})
            text = "".join(parts)
            prompt, completion = _usage_or_words(usage, messages, text)
    cost = await _bill(run, endpoint, prompt, completion)
    yield LastChunk(sse("done", {"text": redactor.redact(text) if secrets else text,
                                 "usage": {"tokens": prompt + completion,
                                           "cost": float(cost)}}))


# One encoder for every event (json.dumps with options builds a new one each call).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {_COMPACT.encode(data)}\n\n".encode()


# What _chunk returns for `data: [DONE]`, the stream's end.
_DONE: dict[str, Any] = {}


def _chunk(what: str, line: str) -> dict[str, Any] | None:
    """The JSON chunk a line of an OpenAI-compatible stream carries: None for a line
    without one, _DONE for [DONE]. A function, not an async generator over the lines:
    one layer less for each of the stream's hundreds of lines."""
    if not line.startswith("data:"):
        return None  # comments, event:/id: lines, blank separators
    data = line[5:].strip()
    if data == "[DONE]":
        return _DONE
    try:
        chunk = parsers.loads(data)  # the strict parse, as for a whole answer
    except ValueError:
        raise upstream.unavailable(what, "sent a malformed chunk", 502) from None
    if not isinstance(chunk, dict):
        raise upstream.unavailable(what, "sent a malformed chunk", 502)
    if chunk.get("error") is not None:
        raise upstream.unavailable(what, "answered with an error mid-answer", 502)
    return chunk


def _chunk_text(chunk: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    usage = chunk.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    pieces = []
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        piece = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(piece, str):
            pieces.append(piece)
    return "".join(pieces), usage


def _completions_url(endpoint: ModelEndpoint) -> str:
    return endpoint.base_url.rstrip("/") + "/chat/completions"


def _model_headers(endpoint: ModelEndpoint) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if endpoint.secret:
        headers["Authorization"] = f"Bearer {endpoint.secret}"
    return headers


def _completion(what: str, answer: upstream.Answer,
                messages: list[dict[str, str]]) -> tuple[str, int, int]:
    try:
        body = answer.json()
        content = body["choices"][0]["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise upstream.unavailable(what, "answered without a chat completion", 502) from None
    if not isinstance(content, str):
        raise upstream.unavailable(what, "answered without a chat completion", 502)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    return (content, *_usage_or_words(usage, messages, content))


def _usage_or_words(usage: dict[str, Any], messages: list[dict[str, str]],
                    text: str) -> tuple[int, int]:
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        # Some servers omit usage; count words as the mock backend does, so budgets hold.
        prompt = sum(len(m["content"].split()) for m in messages)
        completion = len(text.split())
    return max(prompt, 0), max(completion, 0)


async def _bill(run: Run, endpoint: ModelEndpoint, prompt: int, completion: int) -> Decimal:
    cost = ((prompt * endpoint.price_prompt_per_1k
             + completion * endpoint.price_completion_per_1k) / 1000).quantize(COST_PLACES)
    # Added to the run's totals, not set: concurrent nodes of one run predict at the
    # same time. Committed with the bills of calls ending meanwhile (runs.bills).
    await bills.add(run.pk, prompt + completion, cost)
    return cost


async def do_invoke_function(run: Run, name: str, value: Any) -> dict[str, Any]:
    """A built-in tool, else the project's Function webhook: POST {"input": value}."""
    check_side_effects(run, f"Function {name!r}")
    # Built-in tools too: a run calls only the tools its graph names.
    check_in_scope(run, "function", name)
    builtin = BUILTIN_TOOLS.get(name)
    if builtin is not None:
        return await in_thread(_builtin)(name, builtin, value)
    if mcp_tools.is_mcp_name(name):
        return await _invoke_mcp_tool(run, name, value)
    function = await in_thread(check_resource)(run, Function, "function", name)
    what = f"function {name!r}"
    headers = {"Accept": "application/json"}
    if function.secret:
        headers["Authorization"] = f"Bearer {function.secret}"
    async with upstream.call_slot(run.project_id, f"function/{name}", what, SLOT_WAIT):
        answer = upstream.check_success(what, await upstream.send(
            what, "POST", function.url, project=run.project_id, headers=headers,
            timeout=CALL_TIMEOUT,
            json_body={"input": value},
        ))
    # The webhook's whole JSON answer is the output (text when it is not JSON).
    output = answer.json_or_text() if answer.content else None
    return {"output": upstream.scrub(output, upstream.secret_values([function.secret]))}


async def _invoke_mcp_tool(run: Run, name: str, value: Any) -> dict[str, Any]:
    """A listed tool of the project's MCP server, in a session of its own: its answer
    (kionga.mcp_client) is the output, scrubbed of the server's secret headers."""
    server, tool = await in_thread(_listed_mcp_tool)(run, name)
    arguments = mcp_tools.arguments_of(value)
    if arguments is None:
        raise APIError(422, "tool_failed", f"MCP tool {name!r} takes a JSON object (or "
                                           "text) as its input.")
    what = f"MCP tool {name!r}"
    async with upstream.call_slot(run.project_id, f"mcp_server/{server.key}", what,
                                  SLOT_WAIT):
        output = await mcp_client.call_tool(
            what, server.url, mcp_client.secret_headers(server.secret_headers),
            CALL_TIMEOUT, tool, arguments)
    return {"output": output}


def _listed_mcp_tool(run: Run, name: str) -> tuple[McpServer, str]:
    """The server and tool of a function name the run's graph names, if the server's
    listing has the tool (else the same 404 as any function this run may not call)."""
    parts = mcp_tools.split_name(name)
    server = McpServer.objects.filter(project_id=run.project_id,
                                      key=parts[0]).first() if parts else None
    if parts is None or server is None or mcp_tools.listed_tool(server.tools, parts[1]) is None:
        raise missing("function", name)
    check_secrets_readable(server, "function", name)
    return server, parts[1]


def _builtin(name: str, builtin: Callable[[Any], Any], value: Any) -> dict[str, Any]:
    # In a pooled thread: a built-in tool is CPU work on anyone's input.
    try:
        return {"output": builtin(value)}
    except ToolError as exc:  # e.g. an input past the bound: say which
        raise APIError(422, "tool_failed", f"Built-in tool {name!r}: {exc}.") from None
    except Exception:  # pure functions, but the input is anyone's JSON
        raise APIError(422, "tool_failed", f"Built-in tool {name!r} failed.") from None


async def do_invoke_connection(connection: ApiConnection, method: str, url: str,
                               body: Any) -> dict[str, Any]:
    """Any upstream status is an answer ({"status", "body"}); only no answer is an error."""
    what = f"API connection {connection.key!r}"
    headers = {"Accept": "application/json", **_secret_headers(connection)}
    sends_body = method in ("POST", "PUT", "PATCH") and body is not None
    async with upstream.call_slot(connection.project_id, f"connection/{connection.key}",
                                  what, SLOT_WAIT):
        answer = await upstream.send(
            what, method, url, project=connection.project_id, headers=headers,
            timeout=CALL_TIMEOUT,
            json_body=body if sends_body and not isinstance(body, str) else None,
            text_body=body if sends_body and isinstance(body, str) else None,
        )
    secrets = upstream.secret_values(_secret_headers(connection).values())
    parsed = answer.json_or_text() if answer.content else None
    return {"status": answer.status, "body": upstream.scrub(parsed, secrets)}


def _secret_headers(connection: ApiConnection) -> dict[str, str]:
    headers = connection.secret_headers if isinstance(connection.secret_headers, dict) else {}
    return {str(k): v for k, v in headers.items() if isinstance(v, str)}


def read_object(dataset: Dataset, key: str) -> dict[str, Any]:
    found = DatasetObject.objects.filter(dataset=dataset, key=key).first()
    if found is None:
        raise APIError(404, "resource_denied",
                       f"There is no object {key!r} in dataset {dataset.key!r}.")
    if isinstance(found.value, str):
        return {"key": key, "text": found.value, "content_type": "text/plain"}
    text = json.dumps(found.value, ensure_ascii=False, separators=(",", ":"))
    return {"key": key, "text": text, "content_type": "application/json"}
