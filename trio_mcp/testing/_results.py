"""Typed views of ``resources/read`` and ``prompts/get`` results for tests.

Each is the result object itself (a ``dict``, so ``result["contents"]`` and equality
with a literal keep working) with properties for what a test usually checks, the way
``ToolResult`` has ``.text`` and ``.structured``.
"""

from __future__ import annotations

import base64

from .._json import JsonObject, JsonValue

__all__ = ["PromptResult", "ResourceResult"]


def _objects(value: JsonValue) -> list[JsonObject]:
    return (
        [item for item in value if isinstance(item, dict)]
        if isinstance(value, list)
        else []
    )


class ResourceResult(dict[str, JsonValue]):
    """A ``resources/read`` result as the client received it.

    .. versionadded:: 0.2
    """

    @property
    def contents(self) -> list[JsonObject]:
        """The ``contents`` entries, in order."""
        return _objects(self.get("contents"))

    @property
    def text(self) -> str:
        """The text contents joined with newlines."""
        return "\n".join(
            text for item in self.contents if isinstance(text := item.get("text"), str)
        )

    @property
    def blobs(self) -> list[bytes]:
        """The binary contents, decoded from base64."""
        return [
            base64.b64decode(blob)
            for item in self.contents
            if isinstance(blob := item.get("blob"), str)
        ]


class PromptResult(dict[str, JsonValue]):
    """A ``prompts/get`` result as the client received it.

    .. versionadded:: 0.2
    """

    @property
    def messages(self) -> list[JsonObject]:
        """The ``messages``, in order (each with ``role`` and ``content``)."""
        return _objects(self.get("messages"))

    @property
    def description(self) -> str | None:
        """The prompt's description, if the result carries one."""
        value = self.get("description")
        return value if isinstance(value, str) else None

    @property
    def text(self) -> str:
        """The text content of every message joined with newlines."""
        texts = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, dict) and isinstance(
                text := content.get("text"), str
            ):
                texts.append(text)
        return "\n".join(texts)
