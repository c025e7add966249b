"""The value types that travel on ports, and the Python shapes that carry them."""

from __future__ import annotations

from typing import Any, Final, Literal

PortType = Literal["text", "chat", "json", "documents"]

TEXT: Final = "text"
CHAT: Final = "chat"
JSON: Final = "json"
DOCUMENTS: Final = "documents"

ALL_TYPES: Final[tuple[PortType, ...]] = ("text", "chat", "json", "documents")

# A chat is a list of turns {"role": ..., "content": ...}; documents are a list of
# {"text": ..., ...}; json is any JSON value; text is a str.
Chat = list[dict[str, Any]]
Documents = list[dict[str, Any]]
