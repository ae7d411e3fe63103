"""An upstream's listings, as the catalog entries a gateway serves them by.

What an upstream lists is read here, once per listing: each tool, prompt, resource
and template becomes a relayed entry (``_dispatch._relayed``) under its served name
(the prefix before tool and prompt names), with the upstream's ``caps=`` and
``timeout=``. An upstream's listing is another program's output: one entry that
cannot be served (a name invalid with the prefix, an input schema that is not an
object schema, a template we cannot match) is left out and logged, and never stops
the rest.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

import attrs

from .._authority import Capability
from .._declare import PromptArgument, PromptSpec, ResourceSpec, ToolSpec, UriTemplate
from .._dispatch._catalog import Entry, schema_check
from .._dispatch._relayed import (
    Relay,
    RelayedPrompt,
    RelayedResource,
    RelayedTool,
    Send,
)
from .._errors import InvalidDeclaration
from .._json import JsonObject, JsonValue
from ._value import Upstream

__all__ = ["Listing", "entries"]

log = logging.getLogger("trio_mcp")

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

#: The receipt kind of each listed kind.
_KIND = {
    "tools": "tool",
    "prompts": "prompt",
    "resources": "resource",
    "templates": "resource",
}


@attrs.frozen
class Listing:
    """What an upstream lists, as received: one list per kind."""

    tools: Sequence[JsonObject] = ()
    prompts: Sequence[JsonObject] = ()
    resources: Sequence[JsonObject] = ()
    templates: Sequence[JsonObject] = ()


def entries(
    upstream: Upstream,
    listing: Listing,
    send: Send,
    caps: Callable[[str, JsonObject], tuple[Capability, ...]] | None = None,
) -> list[Entry]:
    """The entries ``upstream`` is served by, in its listing's order.

    ``caps`` adds capabilities per entry (a composed ``Server``'s own ``caps=``,
    which the inbound caller must then hold too).
    """
    found: list[Entry] = []
    for kind, items in (
        ("tools", listing.tools),
        ("prompts", listing.prompts),
        ("resources", listing.resources),
        ("templates", listing.templates),
    ):
        for item in items:
            extra = () if caps is None else caps(_KIND[kind], item)
            try:
                entry = _entry(kind, upstream, item, send, extra)
            except (InvalidDeclaration, ValueError, TypeError) as exc:
                log.warning(
                    "upstream %s: %s %s is not served: %s",
                    upstream.label,
                    kind[:-1],
                    _named(item),
                    exc,
                )
                continue
            if entry is not None:
                found.append(entry)
    return found


def _named(item: JsonValue) -> str:
    """How a log line names a listed entry: its name or URI when it has a short
    one (an upstream's text, quoted), else nothing of it."""
    if isinstance(item, dict):
        for key in ("name", "uri", "uriTemplate"):
            value = item.get(key)
            if isinstance(value, str) and len(value) <= 200:
                return repr(value)
    return "(unnamed)"


def _kept(kind: str, item: JsonObject) -> JsonObject:
    """The members of a listed entry we pass on, each only in a shape the revision
    allows: anything else an upstream adds is not ours to vouch for (``execution``:
    a proxied tool is served plain)."""
    out: JsonObject = {}
    for key in _TEXTS[kind]:
        if isinstance(item.get(key), str):
            out[key] = item[key]
    for key in ("inputSchema", "outputSchema", "_meta"):
        if key in _KEEPS[kind] and isinstance(item.get(key), dict):
            out[key] = item[key]
    size = item.get("size")
    if kind == "resources" and type(size) is int and size >= 0:
        out["size"] = size
    icons = _icons(item.get("icons"))
    if icons:
        out["icons"] = icons
    annotations = (_tool_hints if kind == "tools" else _annotations)(
        item.get("annotations")
    )
    if annotations and kind != "prompts":
        out["annotations"] = annotations
    if kind == "prompts" and "arguments" in item:
        out["arguments"] = _arguments(item["arguments"])
    return out


_TEXTS = {
    "tools": ("name", "title", "description"),
    "prompts": ("name", "title", "description"),
    "resources": ("uri", "name", "title", "description", "mimeType"),
    "templates": ("uriTemplate", "name", "title", "description", "mimeType"),
}
_KEEPS = {
    "tools": ("inputSchema", "outputSchema", "_meta"),
    "prompts": ("_meta",),
    "resources": ("_meta",),
    "templates": ("_meta",),
}
_HINTS = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint")


def _icons(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        return []
    icons: list[JsonValue] = []
    for icon in value:
        if not isinstance(icon, dict) or not isinstance(icon.get("src"), str):
            continue
        kept: JsonObject = {"src": icon["src"]}
        if isinstance(icon.get("mimeType"), str):
            kept["mimeType"] = icon["mimeType"]
        sizes = icon.get("sizes")
        if isinstance(sizes, list) and all(isinstance(x, str) for x in sizes):
            kept["sizes"] = sizes
        if icon.get("theme") in ("dark", "light"):
            kept["theme"] = icon["theme"]
        icons.append(kept)
    return icons


def _tool_hints(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        return {}
    kept: JsonObject = {k: value[k] for k in _HINTS if isinstance(value.get(k), bool)}
    if isinstance(value.get("title"), str):
        kept["title"] = value["title"]
    return kept


def _annotations(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        return {}
    kept: JsonObject = {}
    audience = value.get("audience")
    if isinstance(audience, list) and all(a in ("user", "assistant") for a in audience):
        kept["audience"] = audience
    priority = value.get("priority")
    if type(priority) in (int, float) and 0 <= priority <= 1:  # type: ignore[operator]
        kept["priority"] = priority
    if isinstance(value.get("lastModified"), str):
        kept["lastModified"] = value["lastModified"]
    return kept


def _arguments(value: JsonValue) -> list[JsonValue]:
    """A prompt's arguments, each with a name; anything else makes the prompt
    unservable (a caller could not know what to send)."""
    if not isinstance(value, list):
        raise ValueError("its arguments are not a list")
    out: list[JsonValue] = []
    for argument in value:
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise ValueError("an argument has no name")
        kept: JsonObject = {"name": argument["name"]}
        for key in ("title", "description"):
            if isinstance(argument.get(key), str):
                kept[key] = argument[key]
        if isinstance(argument.get("required"), bool):
            kept["required"] = argument["required"]
        out.append(kept)
    return out


def _text(item: JsonObject, key: str) -> str | None:
    value = item.get(key)
    return value if isinstance(value, str) else None


def _entry(
    kind: str,
    upstream: Upstream,
    item: JsonObject,
    send: Send,
    extra: tuple[Capability, ...],
) -> Entry | None:
    if not isinstance(item, dict):
        raise ValueError("a listed entry must be an object")
    caps = (*upstream.caps, *extra)
    if kind == "tools":
        return _tool(upstream, item, send, caps)
    if kind == "prompts":
        return _prompt(upstream, item, send, caps)
    return _resource(kind, upstream, item, send, caps)


def _served_name(upstream: Upstream, item: JsonObject) -> tuple[str, str]:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("it has no name")
    served = upstream.served_name(name)
    if not _NAME.fullmatch(served):
        raise ValueError(
            f"'{served}' is not a valid name (1-128 letters, digits, '_', '.' or '-')"
        )
    return name, served


def _where(upstream: Upstream, kind: str, name: str) -> str:
    """The declaration of a relayed entry, as logs and receipts show it."""
    return f"upstream {upstream.label} {kind} {name!r}"


def _tool(
    upstream: Upstream, item: JsonObject, send: Send, caps: tuple[Capability, ...]
) -> RelayedTool | None:
    name, served = _served_name(upstream, item)
    if not upstream.serves_tool(name):
        return None
    schema = item.get("inputSchema")
    output = item.get("outputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ValueError("its inputSchema is not an object schema")
    if output is not None and not isinstance(output, dict):
        raise ValueError("its outputSchema is not a schema object")
    where = _where(upstream, "tool", name)
    spec = ToolSpec(
        name=served,
        description=_text(item, "description"),
        input_schema=schema,
        output_schema=output,
        title=_text(item, "title"),
        caps=caps,
        timeout=upstream.timeout,
    )
    listed = _kept("tools", item)
    listed["name"] = served
    return RelayedTool(
        declaration=where,
        spec=spec,
        adopter=Relay(upstream=upstream.label, name=name, send=send),
        listed=listed,
        check_output=None if output is None else schema_check(output, where),
    )


def _prompt(
    upstream: Upstream, item: JsonObject, send: Send, caps: tuple[Capability, ...]
) -> RelayedPrompt:
    name, served = _served_name(upstream, item)
    listed = _kept("prompts", item)
    arguments = tuple(
        PromptArgument(
            name=a["name"],  # type: ignore[arg-type,index,call-overload]
            description=_text(a, "description"),  # type: ignore[arg-type]
            required=a.get("required") is True,  # type: ignore[union-attr]
        )
        for a in listed.get("arguments", [])  # type: ignore[union-attr]
    )
    spec = PromptSpec(
        name=served,
        description=_text(item, "description"),
        arguments=arguments,
        title=_text(item, "title"),
        caps=caps,
        timeout=upstream.timeout,
    )
    listed["name"] = served
    return RelayedPrompt(
        declaration=_where(upstream, "prompt", name),
        spec=spec,
        adopter=Relay(upstream=upstream.label, name=name, send=send),
        listed=listed,
    )


def _resource(
    kind: str,
    upstream: Upstream,
    item: JsonObject,
    send: Send,
    caps: tuple[Capability, ...],
) -> RelayedResource:
    key = "uri" if kind == "resources" else "uriTemplate"
    uri = item.get(key)
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"it has no {key}")
    if (kind == "templates") != ("{" in uri):
        raise ValueError("a resource URI holds '{' or a template has no variable")
    where = _where(upstream, "resource", uri)
    name = item.get("name")
    spec = ResourceSpec(
        uri=uri,
        name=name if isinstance(name, str) else uri,
        description=_text(item, "description"),
        mime_type=_text(item, "mimeType"),
        title=_text(item, "title"),
        caps=caps,
        timeout=upstream.timeout,
    )
    listed = _kept(kind, item)
    listed["name"] = spec.name  # required: the URI when the upstream gave none
    return RelayedResource(
        declaration=where,
        spec=spec,
        adopter=Relay(upstream=upstream.label, name=uri, send=send),
        listed=listed,
        template=UriTemplate.parse(uri, where=where),
    )
