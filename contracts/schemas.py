"""The JSON Schemas under contracts/schemas/, and validators that resolve their $refs.

Schemas are named by file: load_schema("graph.v2") reads graph.v2.schema.json. The
artifact schema refers to the graph schema by a relative $ref, so validators are
built with a registry of every schema in the directory.

jsonschema is imported only when a validator is asked for: the runtime image that
only runs graphs does not need it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
BASE_URI = "https://schemas.kionga.dev/agent-graph/"


def schema_names() -> list[str]:
    """Every schema in the directory, e.g. ["artifact.v1", "graph.v2", ...]."""
    return sorted(p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json"))


def load_schema(name: str) -> dict[str, Any]:
    """A fresh copy of one schema: "graph.v2" or "graph.v2.schema.json"."""
    filename = name if name.endswith(".json") else f"{name}.schema.json"
    path = SCHEMA_DIR / filename
    if path.parent != SCHEMA_DIR or not path.is_file():
        raise KeyError(f"no schema named {name!r}; known: {', '.join(schema_names())}")
    with path.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema


@cache
def validator(name: str) -> Any:
    """A jsonschema Draft 2020-12 validator for one schema, with $refs resolvable."""
    from jsonschema import Draft202012Validator, FormatChecker
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    resources = []
    for other in schema_names():
        contents = load_schema(other)
        resource = DRAFT202012.create_resource(contents)
        # Registered under its file name too, for schemas written without an $id.
        resources.append((BASE_URI + f"{other}.schema.json", resource))
        if isinstance(contents.get("$id"), str):
            resources.append((contents["$id"], resource))
    registry: Registry[Any] = Registry().with_resources(resources)
    return Draft202012Validator(
        load_schema(name), registry=registry, format_checker=FormatChecker()
    )


def schema_errors(name: str, instance: Any) -> list[str]:
    """Readable errors of `instance` against schema `name` (empty when it is valid)."""
    errors = sorted(validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]
