"""``@resource``: a function serves a static URI or an RFC 6570 template.

A URI without variables is a static resource (``resources/list``); one with
``{variables}`` is a template (``resources/templates/list``), matched on read with
each variable bound to the parameter of the same name.
"""

from __future__ import annotations

import inspect
import re
import typing
import unicodedata
import urllib.parse
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, ParamSpec, TypeVar, overload

import attrs

from .._authority import Capability
from .._errors import InvalidDeclaration, InvalidReply
from .._json import dumps
from .._schema import UnsupportedType, json_schema
from .._units import Seconds
from ._base import Declaration, declared_seconds, where_of
from ._collect import check_options, declared
from ._content import BlobResourceContents, TextResourceContents
from ._docstring import describe, undescribed
from ._needs_input import NeedsInput
from ._replies import MISSING, encode_as, strip_needs_input
from ._signature import plan_arguments, stale_args
from ._values import (
    Completer,
    Icon,
    ResourceContents,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
)

__all__ = ["FunctionResource", "UriTemplate", "escaping_variable", "resource"]

P = ParamSpec("P")
R = TypeVar("R")

_VAR = re.compile(r"\{([^{}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SEGMENT = r"[^/?#]+"
_RESERVED = r"[^?#]+"
_SEPARATORS = re.compile(r"[/\\]")


@attrs.frozen(eq=False)
class UriTemplate:
    """An RFC 6570 template of ``{name}`` (level 1) and ``{+name}`` (reserved) variables.

    ``{name}`` matches one path segment (no ``/``, ``?`` or ``#``); ``{+name}``
    matches a value that may contain ``/`` (RFC 6570 section 3.2.3), up to a ``?`` or
    ``#``. Matched values are percent-decoded once.
    """

    template: str
    variables: tuple[str, ...]
    pattern: re.Pattern[str]
    segments: frozenset[str] = frozenset()
    """The ``{name}`` variables, which match one path segment (no ``{+name}``)."""

    @classmethod
    def parse(cls, template: str, *, where: str) -> UriTemplate:
        """Parse ``template``.

        Raises:
            InvalidDeclaration: for another operator (``{#x}``, ``{?x}``, ...), an
                empty or repeated name, or unbalanced braces.
        """
        names: list[str] = []
        segments: set[str] = set()
        regex = ["^"]
        pos = 0
        for m in _VAR.finditer(template):
            expression = m.group(1)
            reserved = expression.startswith("+")
            name = expression[1:] if reserved else expression
            if not _VAR_NAME.match(name):
                raise InvalidDeclaration(
                    f"{where}: URI template variable {{{expression}}} is not supported; "
                    "use {name} for one path segment or {+name} for a value that may "
                    "contain '/'"
                )
            if name in names:
                raise InvalidDeclaration(
                    f"{where}: URI template variable {{{name}}} appears twice"
                )
            names.append(name)
            if not reserved:
                segments.add(name)
            regex.append(re.escape(template[pos : m.start()]))
            regex.append(f"(?P<{name}>{_RESERVED if reserved else _SEGMENT})")
            pos = m.end()
        regex.append(re.escape(template[pos:]))
        regex.append(r"\Z")
        if "{" in template[pos:] or "}" in template[pos:]:
            raise InvalidDeclaration(f"{where}: unbalanced braces in URI template")
        pattern = re.compile("".join(regex))
        return cls(template, tuple(names), pattern, frozenset(segments))

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the variables if ``uri`` matches, else None.

        A value that escapes (``..``, a leading ``/``, ``%2F`` in a ``{name}``, ...)
        still matches: the server refuses the read (``escape``, -32602 and a
        receipt) before any reader runs.
        """
        m = self.pattern.match(uri)
        if m is None:
            return None
        return {k: urllib.parse.unquote(v) for k, v in m.groupdict().items()}

    def escape(self, variables: Mapping[str, str]) -> tuple[str, str] | None:
        """Return a matched variable whose value escapes its place, and why, if any.

        Each value is checked on its own (``escaping_variable``), then the values
        joined as the template joins them (``{a}{b}``, ``{+a}.``), so neighbours
        cannot form a ``..`` segment together either.
        """
        found = escaping_variable(variables, self.segments)
        if found is not None:
            return found
        for joined in _forms_of_join(self.template, variables):
            if _parents(joined) > self._literal_parents:
                return ", ".join(self.variables), "a '..' path segment once joined"
        return None

    @property
    def _literal_parents(self) -> int:
        """The ``..`` segments of the template's own text (the author's choice)."""
        skeleton = _VAR.sub("x", self.template)
        return max(map(_parents, _forms_of_join(skeleton, {})))


#: How often a value is percent-decoded when looking for an escape: more layers of
#: encoding than this are refused outright.
_MAX_DECODINGS = 4
_DRIVE = re.compile(r"[A-Za-z]:")


def escaping_variable(
    variables: Mapping[str, str], segments: Collection[str] = ()
) -> tuple[str, str] | None:
    """Return a variable whose value escapes its place, and why, if any.

    A value escapes when it is ``.`` or holds a ``..`` path segment, a leading
    ``/`` or ``\\``, a drive letter (``C:``), a ``\\`` or a NUL anywhere, or, for a
    name in ``segments`` (the single-segment ``{name}`` variables), a ``/``
    anywhere. The value is percent-decoded again and again (``%2F``, ``%252F``),
    so no encoding smuggles an escape past the check to a reader that decodes once
    more or builds a path from the value; each form is also checked in Unicode
    compatibility normalization (NFKC: full-width dots and slashes, U+FF0E and
    U+FF0F, the two-dot leader U+2025), for a reader or file system that normalizes.
    """
    for name, value in variables.items():
        why = _escape(value, segment=name in segments)
        if why is not None:
            return name, why
    return None


def _forms(value: str) -> Iterator[str]:
    """``value``, each percent-decoding of it, and the NFKC form of each.

    Raises:
        _TooDeep: past ``_MAX_DECODINGS`` layers of encoding.
    """
    for _ in range(_MAX_DECODINGS):
        yield value
        normal = unicodedata.normalize("NFKC", value)
        if normal != value:
            yield normal
        decoded = urllib.parse.unquote(value)
        if decoded == value:
            return
        value = decoded
    raise _TooDeep


class _TooDeep(Exception):
    """More layers of percent-encoding than anything legitimate uses."""


def _escape(value: str, *, segment: bool) -> str | None:
    try:
        for form in _forms(value):
            why = _escape_in(form, segment=segment)
            if why is not None:
                return why
    except _TooDeep:
        return f"more than {_MAX_DECODINGS} layers of percent-encoding"
    return None


def _escape_in(value: str, *, segment: bool) -> str | None:
    if ".." in _SEPARATORS.split(value):
        return "a '..' path segment"
    if value == ".":
        return "the path segment '.'"
    if "\x00" in value:
        return "a NUL character"
    if segment and _SEPARATORS.search(value):
        return "a '/' or '\\' inside a single path segment"
    if value.startswith(("/", "\\")):
        return "a leading '/' or '\\'"
    if _DRIVE.match(value):
        return "a drive letter"
    if "\\" in value:
        return "a '\\' (a Windows path separator)"
    return None


def _parents(path: str) -> int:
    """How many ``..`` segments ``path`` holds."""
    return _SEPARATORS.split(path).count("..")


def _value_of(values: Mapping[str, str], m: re.Match[str]) -> str:
    return values.get(m.group(1).lstrip("+"), "")


def _forms_of_join(template: str, variables: Mapping[str, str]) -> Iterator[str]:
    """The template with the values in place, then each percent-decoding of that
    whole (a reader that joins the values and decodes once more sees it), and the
    NFKC form of each; at most ``_MAX_DECODINGS`` layers."""
    joined = _VAR.sub(partial(_value_of, variables), template)
    for _ in range(_MAX_DECODINGS):
        yield joined
        yield unicodedata.normalize("NFKC", joined)
        decoded = urllib.parse.unquote(joined)
        if decoded == joined:
            return
        joined = decoded


def _is_contents(annotation: object) -> bool:
    if annotation in (TextResourceContents, BlobResourceContents):
        return True
    origin = typing.get_origin(annotation)
    return bool(origin) and all(
        _is_contents(a) for a in typing.get_args(annotation) if a is not Ellipsis
    )


class FunctionResource(Declaration[P, R]):
    """A decorated reader of a static URI or a URI template, served as a ``Resource``."""

    kind = "resource"

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        uri: str,
        name: str | None = None,
        title: str | None = None,
        icons: Sequence[Icon] = (),
        mime_type: str | None = None,
        ttl: Seconds | None = None,
        updatable: bool = False,
        caps: Sequence[Capability] = (),
        timeout: Seconds | None = None,
        complete: Mapping[str, Completer] | None = None,
    ) -> None:
        self.icons = tuple(icons)
        self.complete = dict(complete or {})
        where = where_of("resource", fn, uri if isinstance(uri, str) else None)
        if not isinstance(uri, str) or not uri:
            raise InvalidDeclaration(f"{where}: @resource needs uri='scheme://...'")
        self.uri = uri
        self.template = UriTemplate.parse(uri, where=where)
        self.mime_type = mime_type
        self.ttl = declared_seconds(ttl, what=f"{where}: ttl")
        self.updatable = updatable
        self.described = describe(fn)
        super().__init__(fn, name=name, title=title, caps=caps, timeout=timeout)

    @property
    def is_template(self) -> bool:
        """Whether the URI has variables."""
        return bool(self.template.variables)

    def _shown(self, name: str | None, fn: object) -> str | None:
        return self.uri

    def _prepare(self, hints: dict[str, object]) -> None:
        where = self.where
        self.plan = plan_arguments(
            self.fn,
            where=where,
            descriptions={},
            skip_self=self.is_method,
            hints=hints,
            signature=self.signature,
        )
        returns = hints.get("return", MISSING)
        if returns is MISSING:
            raise InvalidDeclaration(
                f"{where}: the return type is not annotated; annotate it "
                "('-> str', '-> bytes', an attrs class, or resource contents)"
            )
        inner = strip_needs_input(returns)
        if inner is str:
            self.shape, default_mime = "text", "text/plain"
        elif inner is bytes:
            self.shape, default_mime = "blob", "application/octet-stream"
        elif _is_contents(inner):
            self.shape, default_mime = "contents", None
        else:
            try:
                json_schema(inner)
            except UnsupportedType as exc:
                raise InvalidDeclaration(
                    f"{where}: return type: {exc.what} is not supported: {exc.reason}; "
                    "a resource returns str, "
                    "bytes, an attrs value, a list or dict, or resource contents"
                ) from None
            self.shape, default_mime = "json", "application/json"
        self.effective_mime = self.mime_type or default_mime
        self.return_type = inner

    def problems(self) -> list[str]:
        """Return what must be fixed before a Server may serve this resource."""
        found = super().problems()
        where = self.where
        if not self.described.summary:
            found.append(undescribed(where, "resource"))
        fields = {one.name: one for one in self.plan.inputs}
        found.extend(stale_args(self.described.params, fields, where=where))
        for var in self.template.variables:
            if var not in fields:
                found.append(
                    f"{where}: URI template variable '{{{var}}}' has no parameter; "
                    f"add a parameter '{var}: str'"
                )
            elif fields[var].annotation is not str:
                found.append(
                    f"{where}: parameter '{var}' is bound to a URI variable and must be 'str'"
                )
        for pname, field in fields.items():
            if pname not in self.template.variables and field.default is attrs.NOTHING:
                found.append(
                    f"{where}: parameter '{pname}' is not a URI template variable; "
                    f"add '{{{pname}}}' to the URI or give it a default"
                )
        return found

    def spec(self) -> ResourceSpec:
        """Return this resource's catalog entry."""
        self.ensure_prepared()
        return ResourceSpec(
            uri=self.uri,
            name=self.name,
            description=self.described.summary,
            mime_type=self.effective_mime,
            title=self.title,
            icons=self.icons,
            caps=self.caps,
            timeout=self.timeout,
            ttl=self.ttl,
            updatable=self.updatable,
            complete=self.complete,
        )

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the bound variables if this declaration serves ``uri``."""
        if not self.is_template:
            return {} if uri == self.uri else None
        return self.template.match(uri)

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        """Run the reader with the URI's variables and shape its contents.

        Raises:
            InvalidReply: if the return value does not fit the return type.
        """
        value = await self.run(dict(read.variables))
        if isinstance(value, NeedsInput):
            return ResourceReply.needs_input(value)
        return ResourceReply(self.contents(read.uri, value))

    def contents(self, uri: str, value: object) -> tuple[ResourceContents, ...]:
        """Shape a reader's return value into resource contents.

        Raises:
            InvalidReply: if ``value`` does not fit the declared return type.
        """
        mime = self.effective_mime
        where = self.declaration
        if isinstance(value, TextResourceContents | BlobResourceContents):
            return (value,)
        if self.shape == "contents":
            if isinstance(value, list | tuple) and all(
                isinstance(c, TextResourceContents | BlobResourceContents)
                for c in value
            ):
                return tuple(value)
            raise InvalidReply(
                where,
                f"returned a {type(value).__name__}; resource contents are declared",
            )
        if self.shape == "text":
            if not isinstance(value, str):
                raise InvalidReply(
                    where, f"returned a {type(value).__name__}; '-> str' is declared"
                )
            return (TextResourceContents(uri, value, mime),)
        if self.shape == "blob":
            if not isinstance(value, bytes | bytearray):
                raise InvalidReply(
                    where,
                    f"returned a {type(value).__name__}; '-> bytes' is declared",
                )
            return (BlobResourceContents(uri, bytes(value), mime),)
        text = dumps(encode_as(value, self.return_type, where=where))
        return (TextResourceContents(uri, text, mime),)


@overload
def resource(
    *,
    uri: str,
    name: str | None = None,
    title: str | None = None,
    icons: Sequence[Icon] = (),
    mime_type: str | None = None,
    ttl: Seconds | None = None,
    updatable: bool = False,
    caps: Sequence[Capability] = (),
    timeout: Seconds | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Callable[[Callable[P, R]], FunctionResource[P, R]]: ...
@overload
def resource(
    uri: str,
    /,
    *,
    name: str | None = None,
    title: str | None = None,
    icons: Sequence[Icon] = (),
    mime_type: str | None = None,
    ttl: Seconds | None = None,
    updatable: bool = False,
    caps: Sequence[Capability] = (),
    timeout: Seconds | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Callable[[Callable[P, R]], FunctionResource[P, R]]: ...
def resource(uri: str | None = None, /, **options: Any) -> Any:
    """Declare a function as a resource reader for a URI or URI template.

    Args:
        uri: ``scheme://path`` or an RFC 6570 template such as ``ticket://{ticket_id}``
            (one path segment) or ``file:///{+path}`` (a value that may contain
            ``/``). A read whose variable escapes (a ``..`` segment, a leading
            ``/`` or ``\\``, a drive letter, a NUL, a ``/`` in a ``{name}``, however
            percent-encoded) is refused (-32602) before the reader runs.
        mime_type: The contents' MIME type; inferred from the return type by default.
        name: The resource's name; defaults to the function's name.
        ttl: Seconds (or timedelta) a read may be cached; without it ``ttlMs`` is 0.
        updatable: Changes are published with ``server.notify_updated(uri)``.
        caps: Capabilities each read requires.
        complete: ``{"variable": fn}``: ``fn(value, context)`` offers values of a
            template variable for ``completion/complete`` (sync or async;
            ``context`` holds the other variables already filled in).
    """
    if uri is not None:
        options["uri"] = uri

    def decorate(fn: Callable[P, R]) -> FunctionResource[P, R]:
        def make() -> FunctionResource[P, R]:
            check_options("resource", fn, options, _RESOURCE_OPTIONS)
            return FunctionResource(fn, **options)

        return declared("resource", fn, make, options.get("uri"))

    return decorate


#: The keywords ``@resource(...)`` takes.
_RESOURCE_OPTIONS = frozenset(inspect.signature(FunctionResource).parameters) - {"fn"}
