"""What a durable task keeps so another process can run it again: its sealed start.

A durable task's start (``@tool(durable=True)``) is the tool, its arguments, the
caller's principal and grants, and the part of the request's ``_meta`` a call reads
(protocol version, client capabilities, client info). It is sealed with the
server's state key (AES-256-GCM, the ``requestState`` sealer, bound to the task id
so a start cannot be moved to another task) before it is written to the store:
``Secret`` arguments are sealed with the rest and never stored in clear, and no
bearer token or request header is kept at all (a ``TokenPrincipal`` holds the
token's verified claims, never the token).

A principal is kept as JSON: ``None``, a string or a mapping as itself, an attrs
instance (``TokenPrincipal``) by its class and fields, anything else by its id
(``principal_id``), which is all the task's owner check reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Final

import attrs

from .._authority import reveal_all
from .._context import principal_id
from .._json import JsonObject, JsonValue
from .._protocol import _wire as wire
from .._protocol._state import Binding, InvalidState, StateSealer

__all__ = [
    "DurableStart",
    "open_start",
    "principal_from_json",
    "principal_to_json",
    "seal_start",
]

_METHOD: Final = "tasks/durable-start"
#: The request's ``_meta`` keys a resumed call carries again.
_META_KEPT: Final = (
    wire.META_PROTOCOL_VERSION,
    wire.META_CLIENT_CAPABILITIES,
    wire.META_CLIENT_INFO,
)


@attrs.frozen
class DurableStart:
    """A durable task's start, as ``seal_start`` keeps it."""

    tool: str
    arguments: Mapping[str, object]
    """As a step sees them: ``Secret`` values are revealed only to be sealed."""
    principal: object | None
    grants: frozenset[str]
    meta: JsonObject


def seal_start(
    sealer: StateSealer, task_id: str, start: DurableStart, ttl: float
) -> str:
    """The start, sealed for ``ttl`` seconds and bound to ``task_id``."""
    contents: JsonObject = {
        "tool": start.tool,
        "arguments": _plain(reveal_all(start.arguments)),
        "principal": principal_to_json(start.principal),
        "grants": list[JsonValue](sorted(start.grants)),
        "meta": {k: start.meta[k] for k in _META_KEPT if k in start.meta},
    }
    keeper = attrs.evolve(sealer, ttl=ttl)
    return keeper.seal(contents, Binding(_METHOD, task_id))


def open_start(sealer: StateSealer, task_id: str, sealed: str) -> DurableStart:
    """The start sealed for ``task_id``.

    Raises:
        InvalidState: if it does not open with this server's keys (no shared
            ``state_key`` across the replicas), or has expired.
    """
    contents = sealer.open(sealed, Binding(_METHOD, task_id))
    arguments, grants, meta = (
        contents.get("arguments"),
        contents.get("grants"),
        contents.get("meta"),
    )
    tool = contents.get("tool")
    if not (
        isinstance(tool, str)
        and isinstance(arguments, dict)
        and isinstance(grants, list)
        and isinstance(meta, dict)
    ):
        raise InvalidState("a durable task's start has an unexpected shape")
    return DurableStart(
        tool,
        arguments,
        principal_from_json(contents.get("principal")),
        frozenset(str(g) for g in grants),
        meta,
    )


def _plain(value: object) -> JsonObject:
    assert isinstance(value, dict)
    return value


# -- principals as JSON -------------------------------------------------------------
def principal_to_json(principal: object | None) -> JsonValue:
    """``principal`` as JSON that ``principal_from_json`` turns back into it."""
    cls: Any = type(principal)
    if attrs.has(cls):
        try:
            fields = {
                f.alias or f.name: _encode(getattr(principal, f.name))
                for f in attrs.fields(cls)
                if f.init
            }
        except TypeError:
            return {"id": principal_id(principal)}
        return {"class": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    try:
        return {"value": _encode(principal)}
    except TypeError:
        return {"id": principal_id(principal)}


def principal_from_json(value: JsonValue) -> object | None:
    """The principal ``principal_to_json`` wrote (its id, if only that was kept)."""
    if not isinstance(value, dict):
        return None
    if "value" in value:
        return _decode(value["value"])
    name, fields = value.get("class"), value.get("fields")
    if isinstance(name, str) and isinstance(fields, dict):
        cls = _class(name)
        if cls is not None:
            made: object = cls(**{k: _decode(v) for k, v in fields.items()})
            return made
    return value.get("id")


def _class(name: str) -> type | None:
    """The attrs class ``module:Qual.Name``, or None if it is gone."""
    module_name, _, qualname = name.partition(":")
    try:
        found: object = importlib.import_module(module_name)
    except ImportError:
        return None
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) and attrs.has(found) else None


def _encode(value: object) -> JsonValue:
    """JSON for a principal's value: sets and mappings tagged, so they come back.

    Raises:
        TypeError: for a value JSON cannot carry.
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {"$map": {str(k): _encode(v) for k, v in value.items()}}
    if isinstance(value, set | frozenset):
        return {"$set": sorted((_encode(v) for v in value), key=repr)}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    raise TypeError(f"cannot keep a {type(value).__name__} in a durable start")


def _decode(value: JsonValue) -> object:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "$set" in value and isinstance(value["$set"], list):
            return frozenset(_decode(v) for v in value["$set"])
        inner = value.get("$map")
        if isinstance(inner, dict):
            return {k: _decode(v) for k, v in inner.items()}
    return value
