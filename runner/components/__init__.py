"""The dispatch table: component kind → implementation.

Pure kinds are plain functions the scheduler calls inline; the others are
coroutines run as tasks under their registry timeout and retries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from contracts.types import PortType
from runner.components.approval import run_approval
from runner.components.flows import run_loop, run_map, run_subflow
from runner.components.io import run_input, run_output
from runner.components.logic import run_condition, run_extract, run_join, run_memory, run_router
from runner.components.model import run_model
from runner.components.prompt import run_prompt
from runner.components.resources import run_api, run_knowledge, run_storage, run_tool
from runner.context import NodeContext, NodeOutput

PureComponent = Callable[[NodeContext, Any, PortType], NodeOutput]
AsyncComponent = Callable[[NodeContext, Any, PortType], Awaitable[NodeOutput]]

PURE: Final[dict[str, PureComponent]] = {
    "input": run_input,
    "output": run_output,
    "prompt": run_prompt,
    "condition": run_condition,
    "router": run_router,
    "join": run_join,
    "extract": run_extract,
    "memory": run_memory,
}

ASYNC: Final[dict[str, AsyncComponent]] = {
    "model": run_model,
    "tool": run_tool,
    "api": run_api,
    "knowledge": run_knowledge,
    "storage": run_storage,
    "subflow": run_subflow,
    "map": run_map,
    "loop": run_loop,
    "approval": run_approval,
}
