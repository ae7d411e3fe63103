"""Content blocks and resource contents that handlers may return.

Each is a frozen attrs value with ``to_wire()``; binary data is held as ``bytes`` and
base64-encoded only on the wire.
"""

from __future__ import annotations

import base64
from typing import Literal, TypeAlias

import attrs

from .. import _checks as checks
from .._json import JsonObject

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "Content",
    "EmbeddedResource",
    "ImageContent",
    "PromptMessage",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# Checked when built, so a block the revision's schema refuses never reaches the
# wire: the handler that builds one fails at that line with McpError.InvalidArgument
# (docs/errors.md, InvalidReply).
is_str = checks.text
is_optional_str = checks.optional(checks.text)
_bytes = checks.of_type(bytes, "bytes")
_optional_object = checks.optional(checks.mapping)


@attrs.frozen
class TextContent:
    """A text block."""

    text: str = attrs.field(validator=is_str)

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``TextContent``."""
        return {"type": "text", "text": self.text}


@attrs.frozen
class ImageContent:
    """An image block; ``data`` is the raw image bytes."""

    data: bytes = attrs.field(validator=_bytes)
    mime_type: str = attrs.field(validator=is_str)

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ImageContent``."""
        return {"type": "image", "data": _b64(self.data), "mimeType": self.mime_type}


@attrs.frozen
class AudioContent:
    """An audio block; ``data`` is the raw audio bytes."""

    data: bytes = attrs.field(validator=_bytes)
    mime_type: str = attrs.field(validator=is_str)

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``AudioContent``."""
        return {"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type}


@attrs.frozen
class ResourceLink:
    """A link to a resource the client may read."""

    uri: str = attrs.field(validator=is_str)
    name: str = attrs.field(validator=is_str)
    description: str | None = attrs.field(default=None, validator=is_optional_str)
    mime_type: str | None = attrs.field(default=None, validator=is_optional_str)

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ResourceLink``."""
        out: JsonObject = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        return out


@attrs.frozen
class TextResourceContents:
    """The text of a resource."""

    uri: str = attrs.field(validator=is_str)
    text: str = attrs.field(validator=is_str)
    mime_type: str | None = attrs.field(default=None, validator=is_optional_str)
    meta: JsonObject | None = attrs.field(
        default=None, kw_only=True, validator=_optional_object, hash=False
    )
    """The contents' ``_meta`` (an MCP App view's ``{"ui": {...}}``), as given."""

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``TextResourceContents``."""
        out: JsonObject = {"uri": self.uri, "text": self.text}
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.meta is not None:
            out["_meta"] = self.meta
        return out


@attrs.frozen
class BlobResourceContents:
    """The bytes of a resource."""

    uri: str = attrs.field(validator=is_str)
    blob: bytes = attrs.field(validator=_bytes)
    mime_type: str | None = attrs.field(default=None, validator=is_optional_str)
    meta: JsonObject | None = attrs.field(
        default=None, kw_only=True, validator=_optional_object, hash=False
    )
    """The contents' ``_meta``, as given."""

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``BlobResourceContents``."""
        out: JsonObject = {"uri": self.uri, "blob": _b64(self.blob)}
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.meta is not None:
            out["_meta"] = self.meta
        return out


ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents


@attrs.frozen
class EmbeddedResource:
    """A resource's contents embedded in a result."""

    resource: ResourceContents = attrs.field(
        validator=checks.of_type(
            (TextResourceContents, BlobResourceContents),
            "a TextResourceContents or BlobResourceContents",
        )
    )

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``EmbeddedResource``."""
        return {"type": "resource", "resource": self.resource.to_wire()}


Content: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
)
CONTENT_TYPES = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLink,
    EmbeddedResource,
)


@attrs.frozen
class PromptMessage:
    """One message of a prompt: a role and one content block."""

    role: Literal["user", "assistant"] = attrs.field(
        validator=checks.one_of("user", "assistant")
    )
    content: Content = attrs.field(
        validator=checks.of_type(
            CONTENT_TYPES,
            "a content block (TextContent, ImageContent, AudioContent, ResourceLink "
            "or EmbeddedResource)",
        )
    )

    @classmethod
    def user(cls, content: str | Content) -> PromptMessage:
        """Return a user message from text or a content block."""
        return cls(
            "user", TextContent(content) if isinstance(content, str) else content
        )

    @classmethod
    def assistant(cls, content: str | Content) -> PromptMessage:
        """Return an assistant message from text or a content block."""
        return cls(
            "assistant", TextContent(content) if isinstance(content, str) else content
        )

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``PromptMessage``."""
        return {"role": self.role, "content": self.content.to_wire()}
