"""Calls as values: what a server serves is any object with ``spec()`` and ``dispatch()``.

RFC 156 "Catalog" 1-2: a server list holds adopters of ``Tool``, ``Resource`` or
``Prompt``, not only what the decorators make. An adopter describes itself with a
frozen spec (``ToolSpec``), receives one frozen call value (``ToolCall``) and answers
with one reply value (``ToolReply``). Everything else about the running call (its
cancel token, deadline, progress, grants) is in ``ToolContext.current()``.

The server wraps every adopter the same way: caps, receipt, span, redaction and the
reply guard (a reply is checked against the spec before it is encoded), so a
hand-written tool gets exactly the guarantees of a decorated function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Literal, Protocol, TypeAlias, runtime_checkable

import attrs

from .. import _checks as checks
from .._authority import Capability
from .._json import JsonObject, JsonValue
from .._units import Seconds, seconds
from ._content import (
    CONTENT_TYPES,
    BlobResourceContents,
    Content,
    PromptMessage,
    TextResourceContents,
    is_optional_str,
    is_str,
)
from ._needs_input import NeedsInput
from ._view import View, Visibility, check_visibility, tool_ui

__all__ = [
    "Completer",
    "Icon",
    "Prompt",
    "PromptArgument",
    "PromptGet",
    "PromptReply",
    "PromptSpec",
    "Resource",
    "ResourceRead",
    "ResourceReply",
    "ResourceSpec",
    "Tool",
    "ToolCall",
    "ToolHints",
    "ToolReply",
    "ToolSpec",
]

RequestId: TypeAlias = str | int | None

#: Whether a tool's calls may run as tasks (the tasks extension, SEP-2663).
TaskSupport: TypeAlias = Literal["optional", "required"]
#: When a task's ``CreateTaskResult`` is sent: as the call starts, or when the
#: handler calls ``ToolContext.task_started()``.
TaskStart: TypeAlias = Literal["call", "handler"]

#: Offers values for one argument: ``fn(value, context) -> Iterable[str]``, sync (run
#: in a worker thread) or async; ``context`` holds the other arguments already filled.
Completer: TypeAlias = Callable[
    [str, dict[str, str]], Iterable[str] | Awaitable[Iterable[str]]
]


def _completers(value: Mapping[str, Completer] | None) -> Mapping[str, Completer]:
    if value is not None and not isinstance(value, Mapping):
        raise checks.invalid("complete=", "a mapping of names to completers", value)
    # Each key and completer is checked with the declaration (InvalidDeclaration
    # naming the parameter), like the rest of what a decorator is given.
    return MappingProxyType(dict(value or {}))


def _complete_field() -> Mapping[str, Completer]:
    """``complete=``: a completer per argument or template variable (not compared)."""
    return attrs.field(
        factory=dict, converter=_completers, eq=False, hash=False, repr=False
    )


# Each spec checks its fields when built, so no listing can break the revision's
# schema, whoever wrote the spec (docs/calls-as-values.md).
_opt_bool = checks.optional(checks.flag)
_object = checks.mapping


def _timeout(value: Seconds | None) -> float | None:
    found = seconds(value, what="timeout", finite=True)
    if found == 0:
        raise checks.invalid("timeout", "more than 0 seconds, or None", value)
    return found


def _ttl(value: Seconds | None) -> float | None:
    return seconds(value, what="ttl", finite=True)


def _icons(value: Iterable[Icon]) -> tuple[Icon, ...]:
    icons = checks.as_tuple(value, "icons=", "a list of Icon values")
    for icon in icons:
        if not isinstance(icon, Icon):
            raise checks.invalid("each of icons=", "an Icon", icon)
    return icons


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return checks.as_tuple(value, "Icon.sizes", "a list of str such as ['48x48']")


def _visibility(value: Iterable[str] | None) -> tuple[Visibility, ...] | None:
    return check_visibility(value, where="ToolSpec")


def _meta(value: Mapping[str, JsonValue] | None) -> JsonObject | None:
    if value is not None and not isinstance(value, Mapping):
        raise checks.invalid("meta=", "a mapping (the _meta object) or None", value)
    return None if value is None else dict(value)


def _caps(value: Iterable[Capability]) -> tuple[Capability, ...]:
    caps = checks.as_tuple(value, "caps=", "a list of Capability values")
    for cap in caps:
        if not isinstance(cap, Capability):
            raise checks.invalid("each of caps=", "a Capability", cap)
    return caps


@attrs.frozen
class Icon:
    """An icon a client may show for the server or an entry (the revision's ``Icon``)."""

    src: str = attrs.field(validator=is_str)
    mime_type: str | None = attrs.field(default=None, validator=is_optional_str)
    sizes: tuple[str, ...] = attrs.field(
        default=(),
        converter=_strings,
        validator=checks.each(is_str, "a str such as '48x48'"),
    )
    theme: str | None = attrs.field(
        default=None, validator=checks.optional(checks.one_of("light", "dark"))
    )

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``Icon``."""
        out: JsonObject = {"src": self.src}
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.sizes:
            out["sizes"] = list(self.sizes)
        if self.theme is not None:
            out["theme"] = self.theme
        return out


def _icons_to_wire(out: JsonObject, icons: tuple[Icon, ...]) -> None:
    if icons:
        out["icons"] = [icon.to_wire() for icon in icons]


@attrs.frozen(kw_only=True)
class ToolHints:
    """Hints for the client about a tool's behaviour. They grant nothing.

    Only the hints the author sets are listed; the revision's defaults
    (not read-only, destructive, not idempotent, open world) apply to the rest.
    """

    read_only: bool | None = attrs.field(default=None, validator=_opt_bool)
    destructive: bool | None = attrs.field(default=None, validator=_opt_bool)
    idempotent: bool | None = attrs.field(default=None, validator=_opt_bool)
    open_world: bool | None = attrs.field(default=None, validator=_opt_bool)
    title: str | None = attrs.field(default=None, validator=is_optional_str)

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ToolAnnotations`` with the hints that were set."""
        pairs: list[tuple[str, JsonValue]] = [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
            ("title", self.title),
        ]
        return {key: value for key, value in pairs if value is not None}


# -- tools ---------------------------------------------------------------------------------
@attrs.frozen
class ToolSpec:
    """A tool's catalog entry and the rules each of its calls runs under.

    ``caps`` are required by every call (and bound ``ToolContext.require``);
    ``timeout`` (seconds) becomes each call's deadline.
    """

    name: str = attrs.field(validator=is_str)
    description: str | None = attrs.field(validator=is_optional_str)
    input_schema: JsonObject = attrs.field(validator=_object)
    output_schema: JsonObject | None = attrs.field(
        default=None, validator=checks.optional(_object)
    )
    title: str | None = attrs.field(default=None, validator=is_optional_str)
    annotations: ToolHints | None = attrs.field(
        default=None,
        validator=checks.optional(checks.of_type(ToolHints, "a ToolHints")),
    )
    icons: tuple[Icon, ...] = attrs.field(default=(), converter=_icons)
    caps: tuple[Capability, ...] = attrs.field(default=(), converter=_caps)
    timeout: float | None = attrs.field(default=None, converter=_timeout)
    task: TaskSupport | None = attrs.field(
        default=None, validator=checks.optional(checks.one_of("optional", "required"))
    )
    """``"optional"`` or ``"required"``: calls may (or must) run as tasks."""
    task_start: TaskStart = attrs.field(
        default="call", validator=checks.one_of("call", "handler")
    )
    """``"handler"``: the task exists once the handler calls ``task_started()``."""
    durable: bool = attrs.field(default=False, validator=checks.of_type(bool, "a bool"))
    """With a shared store, a task whose process dies runs again elsewhere."""
    max_attempts: int = attrs.field(default=3)
    """Most attempts of a durable task (the first one included)."""
    view: View | None = attrs.field(
        default=None,
        validator=checks.optional(checks.of_type(View, "a View")),
    )
    """The MCP App view a host renders for the tool (``_meta.ui.resourceUri``)."""
    visibility: tuple[Visibility, ...] | None = attrs.field(
        default=None, converter=_visibility
    )
    """Who may call it: ``"model"``, ``"app"`` (its view), or both (the default)."""

    @property
    def hints(self) -> ToolHints | None:
        """The older name of ``annotations``."""
        return self.annotations

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``Tool``."""
        out: JsonObject = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations is not None:
            out["annotations"] = self.annotations.to_wire()
        _icons_to_wire(out, self.icons)
        ui = tool_ui(self.view, self.visibility)
        if ui:
            out["_meta"] = {"ui": ui}
        return out


@attrs.frozen
class ToolCall:
    """One ``tools/call`` as an adopter receives it: the arguments as the client sent them."""

    name: str
    arguments: JsonObject = attrs.field(factory=dict)
    request_id: RequestId = None
    principal: object | None = None


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


#: ``ToolReply.structured`` when the reply has no structured content.
ABSENT = _Absent()


def _content(value: Content | Iterable[Content] | None) -> tuple[Content, ...]:
    if value is None:
        return ()
    if isinstance(value, CONTENT_TYPES):
        return (value,)
    if isinstance(value, str | bytes | Mapping):
        raise TypeError(
            "content= takes content blocks (TextContent, ImageContent, ...), "
            f"got {type(value).__name__}"
        )
    return tuple(value)


@attrs.frozen
class ToolReply:
    """What a tool answers: a result, an ``isError`` result, or a request for input.

    Build one with ``ToolReply.ok``, ``ToolReply.error`` or ``ToolReply.needs_input``.
    The server checks it against the tool's spec before anything is sent: structured
    content must satisfy the ``output_schema``, content must be content blocks.
    """

    structured: JsonValue | _Absent = ABSENT
    content: tuple[Content, ...] = ()
    is_error: bool = False
    detail: JsonObject | None = None
    needs: NeedsInput | None = None
    error_type: str | None = None
    """For receipts: the qualified name of the exception an error reply reports."""

    @classmethod
    def ok(
        cls,
        structured: JsonValue | _Absent = ABSENT,
        content: Content | Iterable[Content] | None = None,
    ) -> ToolReply:
        """A result: ``structured`` becomes ``structuredContent`` (and, without
        ``content``, one text block with its JSON); ``content`` the content blocks.

        A tool with an ``output_schema`` always sends ``structuredContent``; pass
        ``None`` for a ``null`` one.
        """
        return cls(structured=structured, content=_content(content))

    @classmethod
    def error(
        cls,
        message: str,
        detail: JsonObject | None = None,
        *,
        error_type: str | None = None,
    ) -> ToolReply:
        """An ``isError`` result the model reads; secrets in it are masked."""
        from ._content import TextContent

        return cls(
            content=(TextContent(message),),
            is_error=True,
            detail=detail,
            error_type=error_type,
        )

    @classmethod
    def needs_input(cls, needs: NeedsInput) -> ToolReply:
        """Ask the client for input (multi round-trip); it calls again with answers."""
        return cls(needs=needs)


@runtime_checkable
class Tool(Protocol):
    """Anything a server can serve as a tool: a spec and one uniform call."""

    def spec(self) -> ToolSpec:
        """Return the catalog entry (called once, when the server is built)."""
        ...

    async def dispatch(self, call: ToolCall) -> ToolReply:
        """Answer one call.

        Raise ``DecodeError`` for bad arguments (every problem listed), ``Refusal``
        or ``MissingClientCapability`` as inside any handler; anything else
        becomes -32603.
        """
        ...


# -- resources --------------------------------------------------------------------------
@attrs.frozen
class ResourceSpec:
    """A resource's catalog entry: a static URI, or an RFC 6570 template with ``{var}``."""

    uri: str = attrs.field(validator=is_str)
    name: str = attrs.field(validator=is_str)
    description: str | None = attrs.field(default=None, validator=is_optional_str)
    mime_type: str | None = attrs.field(default=None, validator=is_optional_str)
    title: str | None = attrs.field(default=None, validator=is_optional_str)
    icons: tuple[Icon, ...] = attrs.field(default=(), converter=_icons)
    caps: tuple[Capability, ...] = attrs.field(default=(), converter=_caps)
    timeout: float | None = attrs.field(default=None, converter=_timeout)
    ttl: float | None = attrs.field(default=None, converter=_ttl)
    """Seconds a read may be cached (``ttlMs``); None means 0."""
    updatable: bool = attrs.field(default=False, validator=checks.flag)
    complete: Mapping[str, Completer] = _complete_field()
    """Completers of template variables, for ``completion/complete``."""
    meta: JsonObject | None = attrs.field(default=None, converter=_meta, hash=False)
    """The listing's ``_meta`` (a view's ``{"ui": {...}}``), as given."""

    @property
    def is_template(self) -> bool:
        """Whether the URI has ``{variables}`` (listed by ``resources/templates/list``)."""
        return "{" in self.uri

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``Resource`` or ``ResourceTemplate``."""
        out: JsonObject = {("uriTemplate" if self.is_template else "uri"): self.uri}
        out["name"] = self.name
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        _icons_to_wire(out, self.icons)
        if self.meta is not None:
            out["_meta"] = self.meta
        return out


@attrs.frozen
class ResourceRead:
    """One ``resources/read``: the URI and, for a template, its matched variables."""

    uri: str
    variables: Mapping[str, str] = attrs.field(factory=dict)
    request_id: RequestId = None
    principal: object | None = None


ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents


def _contents(value: Iterable[ResourceContents]) -> tuple[ResourceContents, ...]:
    if isinstance(value, TextResourceContents | BlobResourceContents):
        return (value,)
    return tuple(value)


@attrs.frozen
class ResourceReply:
    """What a resource read answers: its contents, or a request for input."""

    contents: tuple[ResourceContents, ...] = attrs.field(
        default=(), converter=_contents
    )
    needs: NeedsInput | None = None

    @classmethod
    def needs_input(cls, needs: NeedsInput) -> ResourceReply:
        """Ask the client for input (multi round-trip)."""
        return cls(needs=needs)


@runtime_checkable
class Resource(Protocol):
    """Anything a server can serve as a resource or resource template."""

    def spec(self) -> ResourceSpec:
        """Return the catalog entry (called once, when the server is built)."""
        ...

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        """Answer one read; raise ``ResourceNotFound`` when the URI names nothing."""
        ...


# -- prompts ------------------------------------------------------------------------------
@attrs.frozen
class PromptArgument:
    """One argument of a prompt (prompt arguments are strings)."""

    name: str = attrs.field(validator=is_str)
    description: str | None = attrs.field(default=None, validator=is_optional_str)
    required: bool = attrs.field(default=False, validator=checks.flag)

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``PromptArgument``."""
        out: JsonObject = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        out["required"] = self.required
        return out


def _arguments(value: Iterable[PromptArgument]) -> tuple[PromptArgument, ...]:
    return checks.as_tuple(value, "PromptSpec.arguments", "a list of PromptArgument")


@attrs.frozen
class PromptSpec:
    """A prompt's catalog entry."""

    name: str = attrs.field(validator=is_str)
    description: str | None = attrs.field(validator=is_optional_str)
    arguments: tuple[PromptArgument, ...] = attrs.field(
        default=(),
        converter=_arguments,
        validator=checks.each(
            checks.of_type(PromptArgument, "a PromptArgument"), "a PromptArgument"
        ),
    )
    title: str | None = attrs.field(default=None, validator=is_optional_str)
    icons: tuple[Icon, ...] = attrs.field(default=(), converter=_icons)
    caps: tuple[Capability, ...] = attrs.field(default=(), converter=_caps)
    timeout: float | None = attrs.field(default=None, converter=_timeout)
    complete: Mapping[str, Completer] = _complete_field()
    """Completers of arguments, for ``completion/complete``."""

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``Prompt``."""
        out: JsonObject = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.arguments:
            out["arguments"] = [a.to_wire() for a in self.arguments]
        _icons_to_wire(out, self.icons)
        return out


@attrs.frozen
class PromptGet:
    """One ``prompts/get``: checked string arguments (unknown, missing and
    non-string ones are refused before ``dispatch``)."""

    name: str
    arguments: Mapping[str, str] = attrs.field(factory=dict)
    request_id: RequestId = None
    principal: object | None = None


def _messages(value: Sequence[PromptMessage]) -> tuple[PromptMessage, ...]:
    if isinstance(value, PromptMessage):
        return (value,)
    return tuple(value)


@attrs.frozen
class PromptReply:
    """What a prompt answers: its messages (and a description), or a request for input."""

    messages: tuple[PromptMessage, ...] = attrs.field(default=(), converter=_messages)
    description: str | None = None
    needs: NeedsInput | None = None

    @classmethod
    def needs_input(cls, needs: NeedsInput) -> PromptReply:
        """Ask the client for input (multi round-trip)."""
        return cls(needs=needs)


@runtime_checkable
class Prompt(Protocol):
    """Anything a server can serve as a prompt."""

    def spec(self) -> PromptSpec:
        """Return the catalog entry (called once, when the server is built)."""
        ...

    async def dispatch(self, get: PromptGet) -> PromptReply:
        """Answer one ``prompts/get``."""
        ...
