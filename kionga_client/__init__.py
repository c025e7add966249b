"""The agent interface's one implementation: a REST client of any Kionga gateway.

`kionga_client.operations` holds the operations (capabilities, designs, validate, runs,
approvals) and `kionga_client.releases` those towards a release (evaluate, publish,
versions); the `kionga` CLI (`cli.py`) only parses (resolving ID prefixes, `ids.py`)
and prints (`human.py`), and the MCP server (`mcp_server.py`) only maps tools to the
same functions.
It talks HTTP only: it imports nothing of the gateway (no Django), `contracts` at most.
"""

ENVELOPE_SCHEMA = "kionga/1"
__version__ = "0.1.0"
