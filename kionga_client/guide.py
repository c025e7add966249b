"""The agent guide shipped in the package (agent_guide.md)."""

from importlib.resources import files


def agent_guide() -> str:
    return files("kionga_client").joinpath("agent_guide.md").read_text(encoding="utf-8")
