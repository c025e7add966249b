"""The judge as the reference configures it, and as a project's model resource, each
asked for real: the gateway starts the evaluation and its judge run, the runner's
worker executes the signed judge task in this process, the ingester stores its
events and the case is scored. The model server is an OpenAI-compatible peer on
loopback; a resource judge is reached through the internal listener (its own process).

- KIONGA_JUDGE_BACKEND=openai, KIONGA_JUDGE_MODEL=<model name>: the runner asks its
  platform server (MLAIOPS_LLM_BASE_URL, with its key) for that model;
- KIONGA_JUDGE_MODEL=resource:<ID>: the project's model resource, through predict.
The evaluation reports the judge's backend and model either way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from django.conf import settings

from evaluations import progress
from evaluations.models import Evaluation
from kionga.resource_models import ModelEndpoint
from runner import worker
from runner.settings import RunnerSettings, load_settings
from runner.sink import sink_client
from tests.conftest import Api
from tests.evaluations_helpers import (
    case_of,
    end_run,
    evaluations_url,
    gateway_queue,
    judged,
    make_evaluated,
    settle_all,
)
from tests.ingest_helpers import drain
from tests.internal_listener import internal_listener
from tests.loopback import QuietHandler, serving
from tests.runs_helpers import RUNNER_TOKEN, queued_tasks

# The in-process runner worker logs each run's end.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.allow_output]
__all__ = ["gateway_queue"]

VERDICT = json.dumps({"scores": {"relevance": 0.9}, "reason": "On topic."})
PLATFORM_KEY = "sk-platform-0123456789abcdef"
RESOURCE_SECRET = "sk-judge-0123456789abcdef"


@contextmanager
def model_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OpenAI-compatible chat server that always gives VERDICT; yields its base URL
    and the requests it saw."""
    seen: list[dict[str, Any]] = []

    class Judge(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            seen.append({"path": self.path, "body": json.loads(self.read_body()),
                         "authorization": self.headers.get("Authorization")})
            self.answer(200, {"choices": [{"message": {"role": "assistant",
                                                       "content": VERDICT}}],
                              "usage": {"prompt_tokens": 40, "completion_tokens": 8}})

    with serving(Judge) as url:
        yield url, seen


def runner_settings(**environ: str) -> RunnerSettings:
    return load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": RUNNER_TOKEN,
                          "REDIS_URL": settings.REDIS_URL, **environ})


@pytest.fixture
def sink() -> Iterator[redis.Redis]:
    """A Redis client configured as the runner's."""
    client = sink_client(settings.REDIS_URL)
    yield client
    client.close()


def evaluate_one_judged_case(api: Api, alice: Any, acme: Any, rds: redis.Redis,
                             stream: redis.Redis, sink: redis.Redis,
                             runner: RunnerSettings) -> dict[str, Any]:
    """Start an evaluation of one judged case, end its run, let the runner execute the
    judge's task and the ingester store its end; the evaluation as the API reports it."""
    design = make_evaluated(alice, acme, [judged("j1", "hello", "relevance")])
    started = api.client_for(alice).post(evaluations_url(design), {}, format="json")
    assert started.status_code == 201, started.content
    evaluation = Evaluation.objects.get(pk=started.json()["id"])
    progress.advance(str(evaluation.pk))
    end_run(case_of(evaluation, "j1").run_id, output="Answer: hello")
    settle_all(evaluation)
    judge_run = case_of(evaluation, "j1").judge_run
    assert judge_run is not None
    [(payload, signature)] = [task for task in queued_tasks(rds)
                              if task[0]["run_id"] == str(judge_run.pk)]
    worker.execute(payload, signature, settings=runner, client=sink)
    drain(stream)
    settle_all(evaluation)
    answer: dict[str, Any] = api.client_for(alice).get(
        f"/api/v1/agent-evaluations/{evaluation.pk}").json()
    return answer


def test_the_reference_configuration_asks_the_platform_server_for_the_judge_model(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        stream: redis.Redis, sink: redis.Redis, gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_BACKEND = "openai"
    runner_configured.KIONGA_JUDGE_MODEL = "judge-large"
    runner_configured.MLAIOPS_LLM_BACKEND = "mock"  # model nodes: mock; the judge: openai
    with model_server() as (url, seen):
        runner = runner_settings(MLAIOPS_LLM_BACKEND="mock", MLAIOPS_LLM_MODEL="chat-small",
                                 MLAIOPS_LLM_BASE_URL=f"{url}/v1")
        runner = replace(runner, llm=replace(runner.llm, api_key=PLATFORM_KEY))
        got = evaluate_one_judged_case(api, alice, acme, rds, stream, sink, runner)

    [case] = got["cases"]
    assert case["status"] == "passed", case["reason"]
    assert case["judge_scores"] == {"relevance": 0.9} and case["judge_reason"] == "On topic."
    [asked] = seen
    assert asked["path"] == "/v1/chat/completions"
    assert asked["body"]["model"] == "judge-large"
    assert asked["authorization"] == f"Bearer {PLATFORM_KEY}"
    assert "Rubric version: kionga-rubric-1" in asked["body"]["messages"][0]["content"]
    assert got["judge"] == {"backend": "openai", "model": "judge-large",
                            "rubric_version": "kionga-rubric-1", "chosen_by": "operator",
                            "destination": None}
    assert got["status"] == "completed" and got["passed"] is True


def test_an_empty_judge_model_asks_the_platform_chat_model(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        stream: redis.Redis, sink: redis.Redis, gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_BACKEND = ""
    runner_configured.KIONGA_JUDGE_MODEL = ""
    runner_configured.MLAIOPS_LLM_BACKEND = "openai"
    runner_configured.MLAIOPS_LLM_MODEL = "chat-small"
    with model_server() as (url, seen):
        runner = runner_settings(MLAIOPS_LLM_BACKEND="openai", MLAIOPS_LLM_MODEL="chat-small",
                                 MLAIOPS_LLM_BASE_URL=f"{url}/v1")
        got = evaluate_one_judged_case(api, alice, acme, rds, stream, sink, runner)

    assert got["cases"][0]["status"] == "passed", got["cases"][0]["reason"]
    assert [asked["body"]["model"] for asked in seen] == ["chat-small"]
    assert got["judge"]["backend"] == "openai" and got["judge"]["model"] == "chat-small"


def test_a_judge_without_a_platform_server_fails_its_case_saying_so(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        stream: redis.Redis, sink: redis.Redis, gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_BACKEND = "openai"
    runner_configured.KIONGA_JUDGE_MODEL = "judge-large"
    runner = runner_settings(MLAIOPS_LLM_BACKEND="mock")
    got = evaluate_one_judged_case(api, alice, acme, rds, stream, sink, runner)
    [case] = got["cases"]
    assert case["status"] == "failed"
    assert case["reason"].startswith("The judge could not score: its run failed")
    assert "MLAIOPS_LLM_BASE_URL is not set" in case["reason"]


@pytest.fixture(scope="module")
def callback_url(django_db_setup: None) -> Iterator[str]:
    with internal_listener() as url:
        yield url


def test_a_resource_judge_asks_the_projects_model_through_predict(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        stream: redis.Redis, sink: redis.Redis, gateway_queue: redis.Redis,
        callback_url: str) -> None:
    runner_configured.KIONGA_JUDGE_BACKEND = ""
    runner_configured.KIONGA_JUDGE_MODEL = "resource:judge"
    runner_configured.KIONGA_AGENT_DESIGNER_CALLBACK_URL = callback_url
    with model_server() as (url, seen):
        ModelEndpoint.objects.create(project=acme, key="judge", base_url=url,
                                     model_name="scripted", secret=RESOURCE_SECRET)
        # The runner's platform model is the mock: only the resource can judge.
        got = evaluate_one_judged_case(api, alice, acme, rds, stream, sink,
                                       runner_settings(MLAIOPS_LLM_BACKEND="mock"))

    [case] = got["cases"]
    assert case["status"] == "passed", case["reason"]
    assert case["judge_scores"] == {"relevance": 0.9}
    [asked] = seen
    assert asked["body"]["model"] == "scripted"
    assert asked["authorization"] == f"Bearer {RESOURCE_SECRET}"
    assert got["judge"] == {"backend": "resource", "model": "resource:judge",
                            "rubric_version": "kionga-rubric-1", "chosen_by": "project",
                            "destination": urlsplit(url).netloc}
    assert got["judge"]["destination"].startswith("127.0.0.1:")
