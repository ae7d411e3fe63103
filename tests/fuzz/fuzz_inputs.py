"""Hypothesis strategies for hostile wire input, as values that print as reproducers.

A batch is a list of items; each item becomes the bytes of one message (stdio adds
the newline). Valid requests get their ids from the harness, so ids never collide
by accident; everything else carries whatever Hypothesis drew.

- ``Call``: a valid request (or notification), with arguments that may hold lone
  surrogates (sent as ``\\ud800`` escapes), huge or overflowing numbers and nesting.
- ``Mutated``: a valid request with one field (``jsonrpc``, ``id``, ``method``,
  ``params``, ``_meta`` and its keys, the tool name, the arguments) removed or
  replaced by an arbitrary JSON value: every field wrong in turn.
- ``Raw``: bytes as they are: arbitrary bytes, invalid UTF-8 spliced into a valid
  request, a member name written twice, deep nesting, huge numbers, messages around
  the size limit, blank lines.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs
from hypothesis import strategies as st
from support import META

VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_INFO = "io.modelcontextprotocol/clientInfo"


@attrs.frozen
class Verbatim:
    """JSON text written as it is, for numbers Python will not print (``1e999``)."""

    text: str


@attrs.frozen
class Call:
    """A valid request; ``notify`` sends it without an id (a notification)."""

    method: str
    params: Any
    notify: bool = False


@attrs.frozen
class Mutated:
    """A valid ``Call`` with the field at ``path`` deleted or replaced."""

    call: Call
    path: tuple[str, ...]
    replacement: Any
    delete: bool


@attrs.frozen
class Raw:
    """Bytes sent exactly as drawn."""

    data: bytes


Item = Call | Mutated | Raw


# -- JSON text, including what json.dumps will not write --------------------------------
def to_json(value: Any, *, ascii_only: bool = True) -> str:
    """Encode ``value`` as JSON text; ``Verbatim`` nodes go in unchanged.

    With ``ascii_only`` lone surrogates become ``\\ud800`` escapes; without it they
    stay raw, and the UTF-8 encoding (``surrogatepass``) is then invalid.
    """
    if isinstance(value, Verbatim):
        return value.text
    if isinstance(value, dict):
        inner = ",".join(
            f"{to_json(str(k), ascii_only=ascii_only)}:{to_json(v, ascii_only=ascii_only)}"
            for k, v in value.items()
        )
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(to_json(v, ascii_only=ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


def message_of(item: Call | Mutated, request_id: str) -> dict[str, Any]:
    """Return the message dict for a valid or mutated call, with ``request_id``."""
    call = item.call if isinstance(item, Mutated) else item
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if not call.notify:
        message["id"] = request_id
    message["method"] = call.method
    message["params"] = copy.deepcopy(call.params)
    if isinstance(item, Mutated):
        _mutate(message, item.path, item.replacement, item.delete)
    return message


def _mutate(
    message: dict[str, Any], path: tuple[str, ...], replacement: Any, delete: bool
) -> None:
    target: Any = message
    for key in path[:-1]:
        if not isinstance(target, dict) or not isinstance(target.get(key), dict):
            return  # an earlier part of the path is not an object here
        target = target[key]
    if delete:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = replacement


def with_variants(item: Item) -> list[Item]:
    """``item``, and for a valid request each field wrong in turn, then as a notification.

    Deterministic, so a drawn request costs one draw but reaches the server as
    ``2 * len(FIELDS) + 2`` messages: each field deleted, each field ``null``.
    """
    if not isinstance(item, Call) or item.notify:
        return [item]
    wrong: list[Item] = [
        Mutated(item, path, None, delete) for path in FIELDS for delete in (True, False)
    ]
    return [item, *wrong, attrs.evolve(item, notify=True)]


def encode_item(item: Item, request_id: str) -> bytes:
    """Return the bytes of ``item``; valid requests carry ``request_id``."""
    if isinstance(item, Raw):
        return item.data
    message = message_of(item, request_id)
    return to_json(message).encode("utf-8")


# -- the pieces --------------------------------------------------------------------------
SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\ud83d", "\ude00b", "\ud83d\ude00"])

texts = st.one_of(
    st.text(max_size=30),
    st.text(st.characters(exclude_categories=()), max_size=30),
    SURROGATES,
    st.builds(
        lambda a, s, b: a + s + b, st.text(max_size=5), SURROGATES, st.text(max_size=5)
    ),
)

numbers = st.one_of(
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e308, -1e308, 1.7976931348623157e308, 5e-324]),
    st.sampled_from(
        [
            Verbatim("1e999"),
            Verbatim("-1e999"),
            Verbatim("1e-999"),
            Verbatim("-0"),
            Verbatim("1" * 400),
            Verbatim("1" * 4400),
            Verbatim("0." + "1" * 500),
        ]
    ),
)

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, texts),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(texts, children, max_size=4),
    ),
    max_leaves=12,
)


def _tool_call(name: str, arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "_meta": META}


valid_calls = st.one_of(
    st.just(Call("server/discover", {"_meta": META})),
    st.just(Call("tools/list", {"_meta": META})),
    st.just(Call("prompts/list", {"_meta": META})),
    st.builds(lambda t: Call("tools/call", _tool_call("echo", {"text": t})), texts),
    st.builds(
        lambda x, f: Call("tools/call", _tool_call("scale", {"x": x, "factor": f})),
        numbers,
        numbers,
    ),
    st.builds(
        lambda a, b: Call("tools/call", _tool_call("pair", {"left": a, "right": b})),
        texts,
        numbers,
    ),
    st.builds(
        lambda name, args: Call("tools/call", _tool_call(name, args)),
        st.sampled_from(["echo", "scale", "pair", "missing"]),
        json_values,
    ),
    st.builds(
        lambda t: Call(
            "prompts/get", {"name": "greet", "arguments": {"name": t}, "_meta": META}
        ),
        texts,
    ),
    st.builds(
        lambda t: Call("resources/read", {"uri": "note://" + t, "_meta": META}), texts
    ),
    st.builds(
        lambda rid: Call(
            "notifications/cancelled", {"requestId": rid, "reason": "fuzz"}, notify=True
        ),
        st.one_of(st.integers(), st.text(max_size=8)),
    ),
    st.builds(lambda m, p: Call(m, p, notify=True), texts, json_values),
)

FIELDS = [
    ("jsonrpc",),
    ("id",),
    ("method",),
    ("params",),
    ("params", "_meta"),
    ("params", "_meta", META_VERSION),
    ("params", "_meta", META_CAPS),
    ("params", "_meta", META_INFO),
    ("params", "name"),
    ("params", "arguments"),
    ("params", "arguments", "text"),
]

mutated = st.builds(
    Mutated,
    call=st.builds(
        lambda t: Call("tools/call", _tool_call("echo", {"text": t})), texts
    ),
    path=st.sampled_from(FIELDS),
    replacement=json_values,
    delete=st.booleans(),
)


def _echo_call(draw: st.DrawFn, text: str) -> bytes:
    """A valid ``echo`` call of ``text`` (a placeholder to replace), any id."""
    request = {
        "jsonrpc": "2.0",
        "id": draw(st.integers(0, 2**31)),
        "method": "tools/call",
        "params": _tool_call("echo", {"text": text}),
    }
    return to_json(request).encode()


BAD_UTF8 = [
    b"\xff",
    b"\x80",
    b"\xc0\xaf",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
]


@st.composite
def spliced(draw: st.DrawFn) -> Raw:
    """Invalid UTF-8 inside a valid request's text, or anywhere in it."""
    bad = draw(st.sampled_from(BAD_UTF8))
    template = _echo_call(draw, "SPLICE")
    if draw(st.booleans()):
        return Raw(template.replace(b"SPLICE", bad))
    at = draw(st.integers(0, len(template)))
    return Raw(template[:at] + bad + template[at:])


@st.composite
def deep(draw: st.DrawFn) -> Raw:
    """Arrays or objects nested around and far beyond the depth limit."""
    depth = draw(
        st.one_of(
            st.sampled_from([127, 128, 129, 130, 1000, 2600]), st.integers(1, 2700)
        )
    )
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    body = opener * depth + "1" + closer * depth
    if draw(st.booleans()):
        return Raw(body.encode())
    args = '{"text":' + body + "}"
    text = (
        '{"jsonrpc":"2.0","id":'
        + str(draw(st.integers(0, 2**31)))
        + ',"method":"tools/call","params":{"name":"echo","arguments":'
        + args
        + ',"_meta":'
        + json.dumps(META)
        + "}}"
    )
    return Raw(text.encode())


#: The member names of an ``echo`` call, each the first of its name in the text.
REPEATABLE = [
    "jsonrpc",
    "id",
    "method",
    "params",
    "name",
    "arguments",
    "text",
    META_VERSION,
]


@st.composite
def repeated(draw: st.DrawFn) -> Raw:
    """A valid ``echo`` call with one member name written twice in its object,
    any value first: the parser differential of duplicate keys."""
    template = _echo_call(draw, draw(texts))
    name = json.dumps(draw(st.sampled_from(REPEATABLE))).encode() + b":"
    value = to_json(draw(json_values)).encode()
    at = template.index(name)
    return Raw(template[:at] + name + value + b"," + template[at:])


def sized(limit: int) -> st.SearchStrategy[Raw]:
    """A valid request whose size lies around ``limit``, never past 1.5 x limit."""

    @st.composite
    def build(draw: st.DrawFn) -> Raw:
        target = draw(st.integers(limit - 64, limit + limit // 2))
        head = _echo_call(draw, "PAD")
        pad = max(0, target - len(head) + 3)
        return Raw(head.replace(b"PAD", b"x" * pad))

    return build()


raw_junk = st.one_of(
    st.binary(max_size=200).map(Raw),
    st.sampled_from([b"", b" ", b"\t", b"\r", b"\x0c", b"\x0b", b"\x00", b"null"]).map(
        Raw
    ),
    json_values.map(lambda v: Raw(to_json(v).encode())),
    json_values.map(
        lambda v: Raw(to_json(v, ascii_only=False).encode("utf-8", "surrogatepass"))
    ),
    spliced(),
    deep(),
    repeated(),
    st.sampled_from(
        [b"1" * 5000, b"-" + b"9" * 4400, b"1e999", b"NaN", b"[Infinity]", b'"\\ud800"']
    ).map(Raw),
)


def items(limit: int | None) -> st.SearchStrategy[Item]:
    """One hostile or valid message; ``limit`` adds messages around that size."""
    options: list[st.SearchStrategy[Item]] = [valid_calls, mutated, raw_junk]
    if limit is not None:
        options.append(sized(limit))
    return st.one_of(*options)


def batches(limit: int | None, *, max_size: int) -> st.SearchStrategy[list[Item]]:
    """Lists of items sent together on one connection, valid requests interleaved.

    At least one item, so a failure shrinks to the one message that causes it.
    """
    return st.lists(items(limit), min_size=1, max_size=max_size)
