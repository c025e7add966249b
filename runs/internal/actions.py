"""What the internal routes do with a resource of the run's project.

Each returns the JSON of runner/resources.py's contract. Upstream answers pass
through kionga.upstream.scrub with the resource's secrets before they leave.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django.db.models import F

from kionga import upstream
from kionga.builtin_tools import BUILTIN_TOOLS, ToolError
from kionga.errors import APIError
from kionga.resource_models import ApiConnection, Dataset, DatasetObject, Function, ModelEndpoint
from runs.internal.checks import check_in_scope, check_resource, check_side_effects
from runs.models import Run

# Below the runner client's 30 s default, so the runner gets our clean 503 instead of
# a timeout of its own.
MODEL_TIMEOUT = 25.0
CALL_TIMEOUT = 20.0
COST_PLACES = Decimal("0.000001")


def do_predict(run: Run, endpoint: ModelEndpoint, messages: list[dict[str, str]]) -> dict[str, Any]:
    """One non-streaming chat completion; its tokens and cost are added to the run."""
    what = f"model {endpoint.key!r}"
    headers = {"Accept": "application/json"}
    if endpoint.secret:
        headers["Authorization"] = f"Bearer {endpoint.secret}"
    answer = upstream.check_success(what, upstream.send(
        what, "POST", endpoint.base_url.rstrip("/") + "/chat/completions", headers=headers,
        timeout=MODEL_TIMEOUT,
        json_body={"model": endpoint.model_name, "messages": messages, "stream": False},
    ))
    text, prompt, completion = _completion(what, answer, messages)
    cost = _bill(run, endpoint, prompt, completion)
    secrets = upstream.secret_values([endpoint.secret])
    # The cost goes back to the node's record (runner/records.py); the run's total is ours.
    return {"text": upstream.scrub(text, secrets),
            "usage": {"tokens": prompt + completion, "cost": float(cost)}}


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
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        # Some servers omit usage; count words as the mock backend does, so budgets hold.
        prompt = sum(len(m["content"].split()) for m in messages)
        completion = len(content.split())
    return content, max(prompt, 0), max(completion, 0)


def _bill(run: Run, endpoint: ModelEndpoint, prompt: int, completion: int) -> Decimal:
    cost = ((prompt * endpoint.price_prompt_per_1k
             + completion * endpoint.price_completion_per_1k) / 1000).quantize(COST_PLACES)
    # F(): concurrent nodes of one run predict at the same time; no lost update.
    Run.objects.filter(pk=run.pk).update(
        tokens=F("tokens") + prompt + completion, cost=F("cost") + cost
    )
    return cost


def do_invoke_function(run: Run, name: str, value: Any) -> dict[str, Any]:
    """A built-in tool, else the project's Function webhook: POST {"input": value}."""
    check_side_effects(run, f"Function {name!r}")
    # Built-in tools too: a run calls only the tools its graph names.
    check_in_scope(run, "function", name)
    builtin = BUILTIN_TOOLS.get(name)
    if builtin is not None:
        try:
            return {"output": builtin(value)}
        except ToolError as exc:  # e.g. an input past the bound: say which
            raise APIError(422, "tool_failed", f"Built-in tool {name!r}: {exc}.") from None
        except Exception:  # pure functions, but the input is anyone's JSON
            raise APIError(422, "tool_failed", f"Built-in tool {name!r} failed.") from None
    function = check_resource(run, Function, "function", name)
    what = f"function {name!r}"
    headers = {"Accept": "application/json"}
    if function.secret:
        headers["Authorization"] = f"Bearer {function.secret}"
    answer = upstream.check_success(what, upstream.send(
        what, "POST", function.url, headers=headers, timeout=CALL_TIMEOUT,
        json_body={"input": value},
    ))
    # The webhook's whole JSON answer is the output (text when it is not JSON).
    output = answer.json_or_text() if answer.content else None
    return {"output": upstream.scrub(output, upstream.secret_values([function.secret]))}


def do_invoke_connection(connection: ApiConnection, method: str, url: str,
                         body: Any) -> dict[str, Any]:
    """Any upstream status is an answer ({"status", "body"}); only no answer is an error."""
    what = f"API connection {connection.key!r}"
    headers = {"Accept": "application/json", **_secret_headers(connection)}
    sends_body = method in ("POST", "PUT", "PATCH") and body is not None
    answer = upstream.send(
        what, method, url, headers=headers, timeout=CALL_TIMEOUT,
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
