"""The agent as an OpenAI-compatible model: `GET /v1/models` and `POST /v1/chat/completions`.

Any OpenAI SDK or tool calls a deployed agent with its base URL (`http://<agent>/v1`) and
an agent API key. The one model is the agent (its name). The last message is the turn's
input (a user message); the messages before it are its history. A turn that fails is
502 `turn_failed` with `x-should-retry: false` (a turn may have had side effects: the
SDKs must not run it again by themselves).

Streamed (`stream: true`): the role chunk at once, then the answer as content chunks
when the turn has ended — the graph's output is what its output node makes of the
whole run, so the model deltas of inner nodes are not the answer (they are in the
`/turns` event stream); then the usage chunk when asked for (stream_options.include_usage)
and `[DONE]`.
"""

from __future__ import annotations

import time
from typing import Any, Final

from agents.http import HttpError
from agents.runtime import Runtime, TurnInput

ROLES: Final = frozenset({"system", "developer", "user", "assistant", "tool"})
MAX_MESSAGES: Final = 200
CHUNK_CHARS: Final = 4096


def models(runtime: Runtime) -> dict[str, Any]:
    return {"object": "list", "data": [model(runtime)]}


def model(runtime: Runtime) -> dict[str, Any]:
    return {"id": runtime.name, "object": "model", "created": runtime.started,
            "owned_by": "kionga"}


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: only text ones
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if len(texts) == len(content) and all(isinstance(t, str) for t in texts):
            return "".join(str(t) for t in texts)
    raise HttpError(400, "invalid_request", f"{where}.content must be text (a string or text "
                                            "parts).")


def parse_chat(runtime: Runtime, body: Any) -> tuple[TurnInput, bool, bool]:
    """The turn, whether to stream, whether to send a usage chunk; 400 or 404 otherwise."""
    if not isinstance(body, dict):
        raise HttpError(400, "invalid_request", "The body must be a JSON object.")
    if body.get("model") != runtime.name:
        raise HttpError(404, "model_not_found", f"This agent answers as model {runtime.name!r}.")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or len(messages) > MAX_MESSAGES:
        raise HttpError(400, "invalid_request",
                        f"messages must be a list of 1 to {MAX_MESSAGES} messages.")
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise HttpError(400, "invalid_request", f"{where} needs a role among "
                                                    f"{', '.join(sorted(ROLES))}.")
        turns.append({"role": message["role"], "content": _text(message.get("content"), where)})
    if turns[-1]["role"] != "user":
        raise HttpError(400, "invalid_request", "The last message must be the user's.")
    stream = body.get("stream", False)
    options = body.get("stream_options") or {}
    user = body.get("user")
    if not isinstance(stream, bool) or not isinstance(options, dict):
        raise HttpError(400, "invalid_request", "stream must be a boolean, stream_options an "
                                                "object.")
    session = user if isinstance(user, str) and 0 < len(user) <= 200 else None
    return (TurnInput(turns[-1]["content"], session, turns[:-1]), stream,
            options.get("include_usage") is True)


def failed(answer: dict[str, Any]) -> HttpError:
    error = answer.get("error") or {}
    return HttpError(502, "turn_failed", f"The agent's turn {answer['turn_id']} ended "
                     f"{answer['status']}: {error.get('message') or error.get('code') or ''}",
                     [("x-should-retry", "false")])


def usage(answer: dict[str, Any]) -> dict[str, int]:
    tokens = int(answer["usage"]["tokens"])
    return {"prompt_tokens": 0, "completion_tokens": tokens, "total_tokens": tokens}


def completion(runtime: Runtime, answer: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"chatcmpl-{answer['turn_id']}", "object": "chat.completion",
            "created": int(time.time()), "model": runtime.name,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": answer["output"] or ""}}],
            "usage": usage(answer)}


def chunk(runtime: Runtime, turn_id: str, delta: dict[str, Any],
          finish_reason: str | None = None) -> dict[str, Any]:
    return {"id": f"chatcmpl-{turn_id}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": runtime.name,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason,
                         "logprobs": None}]}


def answer_chunks(runtime: Runtime, answer: dict[str, Any],
                  include_usage: bool) -> list[dict[str, Any]]:
    """The chunks after the role's, once the turn has ended (before [DONE])."""
    turn_id, text = answer["turn_id"], answer["output"] or ""
    chunks = [chunk(runtime, turn_id, {"content": text[i:i + CHUNK_CHARS]})
              for i in range(0, len(text), CHUNK_CHARS)]
    chunks.append(chunk(runtime, turn_id, {}, "stop"))
    if include_usage:
        chunks.append({**chunk(runtime, turn_id, {}), "choices": [], "usage": usage(answer)})
    return chunks
