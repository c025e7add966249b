"""A task may name the backend and model its `llm` nodes ask (an evaluation's judge run),
never the server or the key: those stay the runner's own (MLAIOPS_LLM_*)."""

from __future__ import annotations

from typing import Any

import pytest

from runner.request import LLMConfig
from runner.settings import load_settings
from runner.task_payload import PayloadError, parse_task
from runner.task_seal import seal

TOKEN = "runner-token-0123456789abcdef"
SETTINGS = load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN, "MLAIOPS_LLM_BACKEND": "mock",
                          "MLAIOPS_LLM_MODEL": "chat-small",
                          "MLAIOPS_LLM_BASE_URL": "http://llm.internal:8000/v1"})


def payload(**extra: Any) -> dict[str, Any]:
    return {"run_id": "r1", "graph": {"nodes": [], "edges": []}, "callback_url": "http://gw",
            "sealed": seal({"credential": "krc_x", "event_key": "00", "lease": "l" * 32},
                         TOKEN, "r1"), **extra}


def llm_of(**extra: Any) -> LLMConfig:
    return parse_task(payload(**extra), SETTINGS).request.llm


def test_a_task_without_a_choice_asks_the_runners_own_model() -> None:
    assert llm_of() == SETTINGS.llm
    assert llm_of(llm=None) == SETTINGS.llm


def test_a_judge_task_names_backend_and_model_on_the_runners_server() -> None:
    asked = llm_of(llm={"backend": "openai", "model": "judge-large",
                        "base_url": "http://elsewhere", "api_key": "sk-other"})
    assert (asked.backend, asked.model) == ("openai", "judge-large")
    assert asked.base_url == "http://llm.internal:8000/v1" and asked.api_key == ""
    # An empty model name: the runner's own MLAIOPS_LLM_MODEL.
    assert llm_of(llm={"backend": "openai", "model": ""}).model == "chat-small"


@pytest.mark.parametrize("choice", [{"backend": "vllm", "model": "m"}, {"backend": "openai"},
                                    {"model": "m"}, "openai"])
def test_it_refuses_a_choice_it_cannot_use(choice: Any) -> None:
    with pytest.raises(PayloadError, match="'llm'"):
        llm_of(llm=choice)
