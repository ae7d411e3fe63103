"""Masking secrets in what a handler produced, by the structure of the reply.

The rule (docs/guides/authority.md, "Secrets"): masking changes strings that came from the handler, and
only those. Protocol keys and fields (``type``, ``mimeType``, ``resultType``, a
result's ``_meta``...) are never touched, so a reply has the same structure whatever
a secret's value is (``"text"``, ``"e"``), and stays valid against the revision's
schema. Handler data is masked wherever it stands: a key of ``structuredContent``
that the output schema does not declare (a ``dict[str, T]`` key) and a content
block's ``uri`` (after its scheme, so it stays a URI). If masking would make two keys
one, or (checked by the tool's target) break the output schema, the result is not
sent (``MaskingFailed``): the call is answered with an ``isError`` result saying a
secret was withheld (``error_type`` ``trio_mcp.SecretWithheld``), rather than a
reply changed in meaning or one its schema refuses.

What is masked is the plaintext of every secret the running call knows: its
``Secret`` arguments and defaults, and every ``Secret`` constructed or revealed
during the call (``_authority._redact``: the call's registry). Nothing from other
calls: one client's secret never changes another client's replies.

Each function here masks one protocol shape: content blocks, structured content
(walked beside the output schema: a string the schema declares as an ``enum`` or
``const`` member is public vocabulary and kept), an ``isError`` detail, prompt
messages, resource contents, completion values, the questions of an
``input_required`` result, and a JSON-RPC error's message and data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Generic, TypeVar

from .._authority import MASK
from .._json import JsonObject, JsonValue, escaped
from .._protocol import _wire as wire

__all__ = [
    "Mask",
    "MaskingFailed",
    "PerSchema",
    "mask_block",
    "mask_blocks",
    "mask_completion",
    "mask_contents",
    "mask_contents_item",
    "mask_detail",
    "mask_error",
    "mask_input_required",
    "mask_prompt",
    "mask_structured",
    "mask_values",
    "may_hold",
    "text_mask",
]

#: Masks one string: every secret plaintext in it replaced by the mask.
Mask = Callable[[str], str]


class MaskingFailed(Exception):
    """Masking would change a reply's meaning (two keys made one) or break its
    output schema; the message says which ("make two keys one")."""


#: A URI's scheme (RFC 3986), kept when a ``uri`` is masked.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def mask_uri(uri: str, mask: Mask) -> str:
    """A handler's ``uri`` masked after its scheme.

    The scheme is public vocabulary (like an ``enum`` member: ``file``, ``https``),
    kept so the result is still a URI; the mask's ``*`` is a URI sub-delimiter, legal
    in the authority, path, query and fragment.
    """
    found = _SCHEME.match(uri)
    if found is None:
        return mask(uri)
    end = found.end()
    return uri[:end] + mask(uri[end:])


def text_mask(values: tuple[str, ...]) -> Mask:
    """The mask of the running call's secret plaintexts (longest first)."""
    return _TextMask(values)


class _TextMask:
    __slots__ = ("values",)

    def __init__(self, values: tuple[str, ...]) -> None:
        self.values = values

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                if value in MASK:
                    # A secret that the mask itself holds ("*"): the masks already
                    # in the text stay as they are, so masking twice changes nothing.
                    parts = text.split(MASK)
                    text = MASK.join(part.replace(value, MASK) for part in parts)
                else:
                    text = text.replace(value, MASK)
        return text


def may_hold(body: bytes, values: tuple[str, ...]) -> bool:
    """Whether a string or key of ``body`` (a reply as ``encode_message`` wrote it)
    may hold one of ``values``; False only when none does.

    A search, not a rewrite: JSON escapes a string one character at a time, so a
    string holding a secret is written holding the secret's escaped form. When no
    secret's escaped form is in the body, masking would change nothing and its walk
    is skipped; when one is (in a key, a protocol field, anywhere), the reply is
    masked by structure as ever. A body of ASCII alone may be the fallback's
    (``\\uXXXX`` escapes, DEL too) or UTF-8's: both forms are looked for.
    """
    ascii = body.isascii()
    for value in values:
        form = escaped(value)
        if form is not None and form in body:
            return True
        if ascii and not (value.isascii() and value.isprintable()):
            # Printable ASCII is written alike by both; anything else may not be.
            form = escaped(value, ascii=True)
            if form is not None and form in body:
                return True
    return False


def mask_values(
    value: JsonValue, mask: Mask, keep: frozenset[str] = frozenset()
) -> JsonValue:
    """Every string value inside ``value`` masked; keys (and values under ``keep``) not."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [mask_values(item, mask, keep) for item in value]
    if isinstance(value, dict):
        return {
            key: item if key in keep else mask_values(item, mask, keep)
            for key, item in value.items()
        }
    return value


#: The fields of each content block that the handler wrote (never ``type``,
#: ``mimeType`` or base64 ``data``); a ``uri`` is masked by ``mask_uri``.
_BLOCK_TEXT: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "resource_link": ("name", "title", "description", "uri"),
}


def mask_block(block: JsonValue, mask: Mask) -> JsonValue:
    """One content block with its handler-written strings masked."""
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if kind == "resource":
        inner = block.get("resource")
        return {**block, "resource": mask_contents_item(inner, mask)}
    fields = _BLOCK_TEXT.get(kind) if isinstance(kind, str) else None
    if not fields:
        return block
    return {
        key: (mask_uri(item, mask) if key == "uri" else mask(item))
        if key in fields and isinstance(item, str)
        else item
        for key, item in block.items()
    }


def mask_blocks(blocks: JsonValue, mask: Mask) -> JsonValue:
    """A list of content blocks, each masked."""
    if not isinstance(blocks, list):
        return blocks
    return [mask_block(block, mask) for block in blocks]


def mask_contents_item(item: JsonValue, mask: Mask) -> JsonValue:
    """A resource's contents: its ``text`` and ``uri`` masked (a blob, a type: never)."""
    if not isinstance(item, dict):
        return item
    out = dict(item)
    text, uri = out.get("text"), out.get("uri")
    if isinstance(text, str):
        out["text"] = mask(text)
    if isinstance(uri, str):
        out["uri"] = mask_uri(uri, mask)
    return out


def mask_contents(result: JsonObject, mask: Mask) -> JsonObject:
    """A ``ReadResourceResult`` with every text contents masked."""
    contents = result.get("contents")
    if not isinstance(contents, list):
        return result
    return {**result, "contents": [mask_contents_item(c, mask) for c in contents]}


def mask_prompt(result: JsonObject, mask: Mask) -> JsonObject:
    """A ``GetPromptResult``: its description and each message's content masked."""
    out = dict(result)
    description = out.get("description")
    if isinstance(description, str):
        out["description"] = mask(description)
    messages = out.get("messages")
    if isinstance(messages, list):
        out["messages"] = [_mask_message(m, mask) for m in messages]
    return out


def _mask_message(message: JsonValue, mask: Mask) -> JsonValue:
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": mask_blocks(content, mask)}
    return {**message, "content": mask_block(content, mask)}


def mask_completion(result: JsonObject, mask: Mask) -> JsonObject:
    """A ``CompleteResult`` with each offered value masked."""
    completion = result.get("completion")
    if not isinstance(completion, dict):
        return result
    values = completion.get("values")
    if not isinstance(values, list):
        return result
    masked = [mask(v) if isinstance(v, str) else v for v in values]
    return {**result, "completion": {**completion, "values": masked}}


def mask_input_required(result: JsonObject, mask: Mask) -> JsonObject:
    """An ``input_required`` result with the text of each question masked: an
    elicitation's ``message``, a sampling request's messages and system prompt."""
    requests = result.get("inputRequests")
    if not isinstance(requests, dict):
        return result
    return {
        **result,
        "inputRequests": {key: _mask_request(r, mask) for key, r in requests.items()},
    }


def _mask_request(request: JsonValue, mask: Mask) -> JsonValue:
    if not isinstance(request, dict) or not isinstance(request.get("params"), dict):
        return request
    params = dict(request["params"])  # type: ignore[arg-type]
    for key in ("message", "systemPrompt"):
        if isinstance(params.get(key), str):
            params[key] = mask(params[key])  # type: ignore[arg-type]
    if isinstance(params.get("messages"), list):
        params["messages"] = [_mask_message(m, mask) for m in params["messages"]]  # type: ignore[union-attr]
    return {**request, "params": params}


def mask_error(error: JsonObject, mask: Mask) -> JsonObject:
    """A JSON-RPC error's message and the string values of its data (not ``kind``)."""
    out = dict(error)
    message = out.get("message")
    if isinstance(message, str):
        out["message"] = mask(message)
    if "data" in out:
        out["data"] = mask_values(out["data"], mask, _KEEP)
    return out


_KEEP = frozenset({"kind"})


def mask_detail(meta: JsonValue, mask: Mask) -> JsonValue:
    """An ``isError`` result's ``_meta``: the error detail's strings (not ``kind``)."""
    if not isinstance(meta, dict) or wire.META_ERROR not in meta:
        return meta
    return {**meta, wire.META_ERROR: mask_values(meta[wire.META_ERROR], mask, _KEEP)}


# -- structured content, beside its schema ------------------------------------------
def mask_structured(value: JsonValue, schema: JsonValue, mask: Mask) -> JsonValue:
    """``structuredContent`` with its string values masked, and the keys the
    output schema does not name (a ``dict[str, T]`` key is the handler's data).

    A string the output schema declares (an ``enum`` member or the ``const``) where
    it stands is kept: it is the catalog's public vocabulary, not the handler's
    secret, and masking it would break the schema for nothing.
    """
    plan = _PLANS.get(schema)
    return _walk(value, plan.node(schema), plan, mask)


def _walk(value: JsonValue, node: _Node, plan: _Plan, mask: Mask) -> JsonValue:
    if isinstance(value, str):
        return value if value in node.declared else mask(value)
    if isinstance(value, dict):
        out: JsonObject = {}
        for key, item in value.items():
            shown = key if key in node.named else mask(key)
            if shown in out:
                raise MaskingFailed("make two keys one")
            out[shown] = _walk(item, plan.child(node, key), plan, mask)
        return out
    if isinstance(value, list):
        return [
            _walk(item, plan.item(node, i), plan, mask) for i, item in enumerate(value)
        ]
    return value


class _Node:
    """What the walk asks of one place in a schema, its branches resolved once.

    ``declared``: the strings an ``enum`` or ``const`` of any branch names (kept);
    ``named``: the keys a branch declares (``properties`` or ``required``: public,
    never masked); ``properties``: each property's schema from the first branch
    that has it, else ``extra`` (the first ``additionalProperties`` schema). The
    nodes under it are found once and kept (``_Plan.child`` and ``item``), for the
    schema's own keys and indexes only: a handler's keys are never kept.
    """

    __slots__ = (
        "branches",
        "children",
        "declared",
        "extra",
        "named",
        "prefixed",
        "properties",
        "tail",
    )

    def __init__(self, branches: list[JsonObject]) -> None:
        self.branches = branches
        declared: set[str] = set()
        named: set[str] = set()
        self.properties: JsonObject = {}
        self.extra: JsonValue = None
        self.prefixed = 0
        """Items before this index may have a ``prefixItems`` schema of their own."""
        for branch in branches:
            enum, const = branch.get("enum"), branch.get("const")
            if isinstance(enum, list):
                declared.update(v for v in enum if isinstance(v, str))
            if isinstance(const, str):
                declared.add(const)
            properties, required = branch.get("properties"), branch.get("required")
            if isinstance(properties, dict):
                named.update(properties)
                for key, sub in properties.items():
                    self.properties.setdefault(key, sub)
            if isinstance(required, list):
                named.update(v for v in required if isinstance(v, str))
            extra, prefix = (
                branch.get("additionalProperties"),
                branch.get("prefixItems"),
            )
            if isinstance(extra, dict) and self.extra is None:
                self.extra = extra
            if isinstance(prefix, list):
                self.prefixed = max(self.prefixed, len(prefix))
        self.declared, self.named = frozenset(declared), frozenset(named)
        self.children: dict[str | int, _Node] = {}
        """The node under each of the schema's keys (and prefix indexes) met so far."""
        self.tail: _Node | None = None
        """The node of every item from ``prefixed`` on, once met."""


class _Plan:
    """One output schema's nodes, each made on first use and kept for every reply
    (by the identity of its subschema, which the root holds: a declaration's schema
    never changes)."""

    __slots__ = ("nodes", "root")

    def __init__(self, schema: JsonValue) -> None:
        self.root: JsonObject = schema if isinstance(schema, dict) else {}
        self.nodes: dict[int, tuple[JsonValue, _Node]] = {}

    def node(self, schema: JsonValue) -> _Node:
        """The node of ``schema``, a subschema of the root (or None: no schema)."""
        kept = self.nodes.get(id(schema))
        if kept is None or kept[0] is not schema:
            node = _Node(_branches(schema, self.root))
            kept = self.nodes[id(schema)] = (schema, node)
        return kept[1]

    def child(self, node: _Node, key: str) -> _Node:
        """The node under ``key`` of an object at ``node``."""
        found = node.children.get(key)
        if found is not None:
            return found
        if key not in node.properties:
            return self.node(node.extra)
        found = node.children[key] = self.node(node.properties[key])
        return found

    def item(self, node: _Node, index: int) -> _Node:
        """The node of the item at ``index`` of a list at ``node``."""
        if index < node.prefixed:
            found = node.children.get(index)
            if found is None:
                found = node.children[index] = self.node(_item(node.branches, index))
            return found
        if node.tail is None:
            node.tail = self.node(_item(node.branches, index))
        return node.tail


S = TypeVar("S", bound=JsonValue)
T = TypeVar("T")


class PerSchema(Generic[S, T]):
    """What ``make`` builds from an output schema, built once per schema object.

    Kept by identity with the schema itself, so an id is not reused while its entry
    lives; past ``MOST_SCHEMAS`` entries the cache starts over (a catalog that keeps
    replacing its tools cannot grow it).
    """

    def __init__(self, make: Callable[[S], T]) -> None:
        self._make = make
        self._kept: dict[int, tuple[S, T]] = {}

    def get(self, schema: S) -> T:
        kept = self._kept.get(id(schema))
        if kept is None or kept[0] is not schema:
            if len(self._kept) > MOST_SCHEMAS:
                self._kept.clear()
            kept = self._kept[id(schema)] = (schema, self._make(schema))
        return kept[1]


#: Schemas a ``PerSchema`` keeps before it starts over.
MOST_SCHEMAS = 1024

#: Each output schema's plan.
_PLANS: PerSchema[JsonValue, _Plan] = PerSchema(_Plan)


def _resolve(schema: JsonValue, root: JsonObject) -> JsonValue:
    """Follow a local ``$ref`` (``#/$defs/Name``) a few times, as 2020-12 allows."""
    for _ in range(8):
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        target: JsonValue = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        schema = target
    return schema


def _branches(schema: JsonValue, root: JsonObject) -> list[JsonObject]:
    """The schema and every ``anyOf``/``oneOf``/``allOf`` branch below it, resolved."""
    found: list[JsonObject] = []
    pending = [schema]
    while pending and len(found) < 64:
        current = _resolve(pending.pop(), root)
        if not isinstance(current, dict):
            continue
        found.append(current)
        for key in ("anyOf", "oneOf", "allOf"):
            more = current.get(key)
            if isinstance(more, list):
                pending.extend(more)
    return found


def _item(branches: list[JsonObject], index: int) -> JsonValue:
    for branch in branches:
        prefix = branch.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            return prefix[index]
        items = branch.get("items")
        if isinstance(items, dict):
            return items
    return None
