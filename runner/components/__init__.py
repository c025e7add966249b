"""Component implementations, found by kind.

Each module of this package registers its kinds with `@implements("kind")`: a plain
function for kinds the registry marks `pure` (the scheduler calls them inline), a
coroutine function for the others (run as tasks under their timeout and retries).
Every module here is imported below, so a new kind touches the registry and its own
module only.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from contracts.registry import COMPONENTS
from contracts.types import PortType
from runner.context import NodeContext, NodeOutput

PureComponent = Callable[[NodeContext, Any, PortType], NodeOutput]
AsyncComponent = Callable[[NodeContext, Any, PortType], Awaitable[NodeOutput]]
F = TypeVar("F", PureComponent, AsyncComponent)

IMPLEMENTATIONS: Final[dict[str, PureComponent | AsyncComponent]] = {}


def implements(kind: str) -> Callable[[F], F]:
    def register(function: F) -> F:
        comp = COMPONENTS.get(kind)
        if comp is None or comp.pure == inspect.iscoroutinefunction(function):
            # A programming error: the registry and the implementation disagree.
            raise TypeError(f"{function.__name__} cannot implement {kind!r}: the registry "
                            "says pure kinds are plain functions, others coroutines")
        IMPLEMENTATIONS[kind] = function
        return function

    return register


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
