"""Starter templates: small, useful graphs that run as they are with the mock model."""

from __future__ import annotations

from typing import Any, Final


def _node(node_id: str, kind: str, name: str, x: int, y: int, **config: str) -> dict[str, Any]:
    node: dict[str, Any] = {"id": node_id, "kind": kind, "name": name, "x": x, "y": y}
    if config:
        node["config"] = config
    return node


def _edge(src: str, dst: str, from_port: str = "out") -> dict[str, Any]:
    return {"from": src, "to": dst, "from_port": from_port, "to_port": "in"}


SETTINGS: Final = {"max_steps": 50, "timeout_seconds": 60, "max_tokens": 50000}

TEMPLATES: Final[list[dict[str, Any]]] = [
    {
        "id": "assistant",
        "example_input": "What are your opening hours?",
        "name": "Assistant",
        "description": "A prompt and a model: the smallest useful agent.",
        "graph": {
            "schema_version": 2,
            "name": "Assistant",
            "nodes": [
                _node("input", "input", "Question", 40, 160),
                _node("prompt", "prompt", "Prompt", 260, 160,
                      template="Answer briefly and politely: {input}"),
                _node("model", "model", "Model", 480, 160, model="llm",
                      system="You are a helpful assistant."),
                _node("output", "output", "Answer", 700, 160),
            ],
            "edges": [_edge("input", "prompt"), _edge("prompt", "model"),
                      _edge("model", "output")],
            "settings": dict(SETTINGS),
        },
    },
    {
        "id": "support-triage",
        "example_input": "I want a refund please",
        "name": "Support triage",
        "description": "Refund questions get their own prompt; everything else a general one.",
        "graph": {
            "schema_version": 2,
            "name": "Support triage",
            "nodes": [
                _node("input", "input", "Question", 40, 160),
                _node("is-refund", "condition", "Refund?", 260, 160,
                      expression="contains:refund"),
                _node("refund-prompt", "prompt", "Refund prompt", 480, 80,
                      template="A customer asks for a refund: {input}"),
                _node("general-prompt", "prompt", "General prompt", 480, 240,
                      template="A customer asks: {input}"),
                _node("model", "model", "Model", 700, 160, model="llm"),
                _node("output", "output", "Reply", 920, 160),
            ],
            "edges": [
                _edge("input", "is-refund"),
                _edge("is-refund", "refund-prompt", "true"),
                _edge("is-refund", "general-prompt", "false"),
                _edge("refund-prompt", "model"),
                _edge("general-prompt", "model"),
                _edge("model", "output"),
            ],
            "settings": dict(SETTINGS),
        },
    },
    {
        "id": "topic-router",
        "example_input": "hello there",
        "name": "Topic router",
        "description": "Routes billing, bug reports and greetings to their own answers.",
        "graph": {
            "schema_version": 2,
            "name": "Topic router",
            "nodes": [
                _node("input", "input", "Message", 40, 200),
                _node("router", "router", "Topic", 260, 200,
                      route_1="contains:invoice", route_2="contains:bug",
                      route_3="matches:(?i)^(hi|hello)\\b"),
                _node("billing", "prompt", "Billing", 480, 40,
                      template="Billing question: {input}"),
                _node("bug", "prompt", "Bug report", 480, 150,
                      template="Bug report received: {input}"),
                _node("greeting", "prompt", "Greeting", 480, 260,
                      template="Greet the user back: {input}"),
                _node("other", "prompt", "Other", 480, 370, template="Other topic: {input}"),
                _node("model", "model", "Model", 700, 200, model="llm"),
                _node("output", "output", "Reply", 920, 200),
            ],
            "edges": [
                _edge("input", "router"),
                _edge("router", "billing", "route_1"),
                _edge("router", "bug", "route_2"),
                _edge("router", "greeting", "route_3"),
                _edge("router", "other", "default"),
                _edge("billing", "model"),
                _edge("bug", "model"),
                _edge("greeting", "model"),
                _edge("other", "model"),
                _edge("model", "output"),
            ],
            "settings": dict(SETTINGS),
        },
    },
    {
        "id": "chat-with-memory",
        "example_input": "Remember me?",
        "name": "Chat with memory",
        "description": "Keeps the last six turns of the conversation for the model.",
        "graph": {
            "schema_version": 2,
            "name": "Chat with memory",
            "nodes": [
                _node("input", "input", "Message", 40, 160),
                _node("memory", "memory", "Memory", 260, 160, strategy="window", turns="6"),
                _node("model", "model", "Model", 480, 160, model="llm",
                      system="You are a friendly assistant that remembers the conversation."),
                _node("output", "output", "Reply", 700, 160),
            ],
            "edges": [_edge("input", "memory"), _edge("memory", "model"),
                      _edge("model", "output")],
            "settings": dict(SETTINGS),
        },
    },
    {
        "id": "extract-field",
        "example_input": "{\"customer\": {\"name\": \"Ada\"}}",
        "name": "Extract a field",
        "description": "Reads a JSON message and answers about one field of it.",
        "graph": {
            "schema_version": 2,
            "name": "Extract a field",
            "nodes": [
                _node("input", "input", "JSON message", 40, 160),
                _node("extract", "extract", "Customer name", 260, 160,
                      path="customer.name", missing="empty"),
                _node("prompt", "prompt", "Greeting", 480, 160, template="Write to {input}"),
                _node("model", "model", "Model", 700, 160, model="llm"),
                _node("output", "output", "Reply", 920, 160),
            ],
            "edges": [_edge("input", "extract"), _edge("extract", "prompt"),
                      _edge("prompt", "model"), _edge("model", "output")],
            "settings": dict(SETTINGS),
        },
    },
]


def template_list() -> list[dict[str, Any]]:
    return TEMPLATES
