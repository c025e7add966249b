"""Calls from the gateway to the outside (model endpoints, function webhooks, API
connections), with the one error mapping the runner's contract expects.

Secrets go out in headers only and never come back: error messages name the resource
and the kind of failure, never the upstream's text or exception (either may quote a
URL or a header), and every answer is scrubbed of the resource's secret values
before it reaches the runner.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx

from kionga import egress, parsers
from kionga.errors import APIError
from runner.redact import MIN_SECRET_CHARS, Redactor

logger = logging.getLogger(__name__)

# Bigger answers are refused: they would be truncated by the runner anyway.
MAX_ANSWER_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    content: bytes
    content_type: str
    what: str = "the upstream"

    def json(self) -> Any:
        """The strict parse (kionga.parsers.loads): a ValueError for anything else."""
        return parsers.loads(self.content)

    def json_or_text(self) -> Any:
        """Parsed JSON when it is JSON, else the text (e.g. an HTML error page).

        JSON we cannot pass on (lone surrogates, 1e999, too deep) is a 502: passing
        it as text would hide that the upstream's answer is broken.
        """
        try:
            return self.json()
        except parsers.JSONRefused as exc:
            reason = str(exc).rstrip(".")
            raise unavailable(self.what, f"answered JSON that cannot be used ({reason})",
                              502) from None
        except ValueError:
            return self.content.decode("utf-8", errors="replace")


def send(what: str, method: str, url: str, *, headers: dict[str, str], timeout: float,
         json_body: Any = None, text_body: str | None = None) -> Answer:
    """One HTTP call; connection problems and oversized answers are resource_unavailable.

    `what` names the resource in messages and logs, e.g. "model 'gpt'".
    """
    body: dict[str, Any] = {}
    if text_body is not None:
        body["content"] = text_body.encode("utf-8")
        headers = {"Content-Type": "text/plain; charset=utf-8", **headers}
    elif json_body is not None:
        body["json"] = json_body
    try:
        # No redirects: following one could carry the secret headers somewhere else.
        # No proxies from the environment: they would bypass the egress policy.
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False,
                          transport=egress.guarded_transport()) as client:
            with client.stream(method, url, headers=headers, **body) as response:
                content = _read_capped(what, response.iter_bytes())
                return Answer(response.status_code, content,
                              response.headers.get("content-type", ""), what)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        # One answer whatever went wrong (refused, timeout, DNS, egress policy), so a
        # staff URL cannot be used to map the network; the kind goes to the log only.
        logger.warning("%s cannot be reached (%s)", what, type(exc).__name__)
        raise APIError(503, "resource_unavailable", f"{capital(what)} cannot be reached.") \
            from None


def _read_capped(what: str, chunks: Iterable[bytes]) -> bytes:
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise unavailable(what, f"answered more than {MAX_ANSWER_BYTES} bytes", 502)
        parts.append(chunk)
    return b"".join(parts)


def check_success(what: str, answer: Answer) -> Answer:
    """Map a failing status: 429 and 5xx may pass on retry; 3xx and other 4xx will not."""
    status = answer.status
    if status == 429 or status >= 500:
        raise unavailable(what, f"answered HTTP {status}", 503 if status == 429 else 502)
    if not 200 <= status < 300:
        logger.warning("%s answered HTTP %s", what, status)
        raise APIError(422, "upstream_rejected", f"{capital(what)} answered HTTP {status}.",
                       {"status": status})
    return answer


def unavailable(what: str, problem: str, status: int) -> APIError:
    # Logged without URL, headers or body: any of them may hold a secret.
    logger.warning("%s %s", what, problem)
    return APIError(status, "resource_unavailable", f"{capital(what)} {problem}.")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def secret_values(values: Iterable[str]) -> list[str]:
    """The strings to scrub: each secret, and the credential part of "Scheme credential"."""
    found: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            continue
        for candidate in (value.strip(), value.strip().split(" ")[-1]):
            if len(candidate) >= MIN_SECRET_CHARS:
                found.add(candidate)
    return sorted(found, key=len, reverse=True)


def scrub(value: Any, secrets: list[str]) -> Any:
    """value with every secret replaced by [redacted], in strings and object keys.

    The runner's Redactor does the replacing (literal secrets only: an upstream's
    answer is data the graph goes on with, not an event), so both sides hide the same.
    """
    if not secrets:
        return value
    return _scrub(value, Redactor(secrets, builtin=False))


def _scrub(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_scrub(item, redactor) for item in value]
    if isinstance(value, dict):
        return {_scrub(k, redactor): _scrub(v, redactor) for k, v in value.items()}
    return value
