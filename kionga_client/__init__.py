"""The agent interface's one implementation: a REST client of any Kionga gateway.

`kionga_client.operations` holds every operation (capabilities, designs, validate, runs,
evaluate, publish, versions, approvals); the `kionga` CLI (`cli.py`) only parses and
prints, and the MCP server (`mcp_server.py`) only maps tools to the same functions.
It talks HTTP only: it imports nothing of the gateway (no Django), `contracts` at most.
"""

ENVELOPE_SCHEMA = "kionga/1"
__version__ = "0.1.0"
