"""Typed views of ``resources/read`` and ``prompts/get`` results for tests.

Each is the result object itself (a ``dict``, so ``result["contents"]`` and equality
with a literal keep working) with properties for what a test usually checks, the way
``ToolResult`` has ``.text`` and ``.structured``.
"""

from __future__ import annotations

import base64

from .._json import JsonObject, JsonValue

__all__ = [
    "ListedPrompt",
    "ListedResource",
    "ListedTool",
    "PromptResult",
    "ResourceResult",
]


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


def _text(entry: dict[str, JsonValue], key: str) -> str | None:
    value = entry.get(key)
    return value if isinstance(value, str) else None


def _members(entry: dict[str, JsonValue], key: str) -> JsonObject:
    value = entry.get(key)
    return value if isinstance(value, dict) else {}


class _Listed(dict[str, JsonValue]):
    """A list entry as the client received it: the wire object, with properties."""

    @property
    def name(self) -> str:
        """The entry's ``name``."""
        return _text(self, "name") or ""

    @property
    def title(self) -> str | None:
        """The display title, if any."""
        return _text(self, "title")

    @property
    def description(self) -> str | None:
        """The description, if any."""
        return _text(self, "description")

    @property
    def meta(self) -> JsonObject:
        """The entry's ``_meta`` (empty when it has none)."""
        return _members(self, "_meta")


class ListedTool(_Listed):
    """A ``tools/list`` entry, as ``list_tools()`` returns it.

    .. versionadded:: 0.3
    """

    @property
    def input_schema(self) -> JsonObject:
        """The ``inputSchema``."""
        return _members(self, "inputSchema")

    @property
    def output_schema(self) -> JsonObject | None:
        """The ``outputSchema``, if the tool declares one."""
        value = self.get("outputSchema")
        return value if isinstance(value, dict) else None

    @property
    def annotations(self) -> JsonObject:
        """The hints (``annotations``: ``readOnlyHint``, ...), empty when none."""
        return _members(self, "annotations")


class ListedResource(_Listed):
    """A ``resources/list`` or ``resources/templates/list`` entry.

    .. versionadded:: 0.3
    """

    @property
    def uri(self) -> str | None:
        """The resource's ``uri`` (None for a template)."""
        return _text(self, "uri")

    @property
    def uri_template(self) -> str | None:
        """The template's ``uriTemplate`` (None for a resource)."""
        return _text(self, "uriTemplate")

    @property
    def mime_type(self) -> str | None:
        """The ``mimeType``, if given."""
        return _text(self, "mimeType")


class ListedPrompt(_Listed):
    """A ``prompts/list`` entry, as ``list_prompts()`` returns it.

    .. versionadded:: 0.3
    """

    @property
    def arguments(self) -> list[JsonObject]:
        """The ``arguments`` (each with ``name``, ``description``, ``required``)."""
        return _objects(self.get("arguments"))
