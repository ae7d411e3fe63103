"""Return-value fuzzing: handlers return arbitrary Python values for every mapped type.

For each type of the mapping table (and for Content, prompts and resource reads)
one declaration returns whatever the test put in ``VALUES`` under its name. The
server runs in-process (``Server.serve_messages``, as ``McpTestClient`` runs it) and
lives for the whole module. For every value:

- the server lives, and every message it emits is valid UTF-8 JSON-RPC that
  validates against the revision's schema (the wire invariants of fuzz_wire.py);
- the reply is a JSON-RPC error -32603, or a result that keeps the contract: a
  tool's ``structuredContent`` validates against its advertised ``outputSchema``
  (jsonschema, formats asserted) and its text block is that same JSON (a string
  itself, when the structured content is one: api.md "Replies"), never
  ``isError``; a JSON resource's text validates against its type's schema; a text
  or blob resource, or a prompt, was given a value of its declared type;
- a value of the declared type (finite, without lone surrogates) gets a result,
  not an error.
"""

from __future__ import annotations

import datetime
import json
import math
import uuid
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal, NewType

import attrs
import jsonschema
import pytest
from fuzz_inputs import Call, texts
from fuzz_targets import InProcessTarget, Target, serving
from fuzz_wire import fuzz_settings, run_rounds, strict_json
from hypothesis import given
from hypothesis import strategies as st
from support import META
from support.values import Color

from trio_mcp import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    Field,
    ImageContent,
    PromptMessage,
    ResourceLink,
    Secret,
    Server,
    TextContent,
    TextResourceContents,
    json_schema,
    prompt,
    resource,
    tool,
)

#: What each declaration returns next, by case name; set by the test.
VALUES: dict[str, Any] = {}


@attrs.frozen
class Point:
    """A plain attrs value."""

    x: int
    y: int


@attrs.frozen
class Circle:
    """One member of a tagged union."""

    radius: float


@attrs.frozen
class Square:
    """The other member of the tagged union."""

    side: float


UserId = NewType("UserId", str)
Content = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


class Opaque:
    """An object no converter knows."""

    def __repr__(self) -> str:
        return "Opaque()"


finite = st.floats(allow_nan=False, allow_infinity=False)
plain_text = st.text(max_size=20)
aware = st.datetimes(
    timezones=st.sampled_from(
        [datetime.UTC, datetime.timezone(datetime.timedelta(hours=-5))]
    )
)
contents = st.one_of(
    st.builds(TextContent, plain_text),
    st.builds(ImageContent, st.binary(max_size=20), st.just("image/png")),
    st.builds(AudioContent, st.binary(max_size=20), st.just("audio/wav")),
    st.builds(ResourceLink, st.just("note://a"), plain_text),
    st.builds(
        EmbeddedResource,
        st.builds(TextResourceContents, st.just("note://a"), plain_text),
    ),
)
messages = st.builds(PromptMessage, st.sampled_from(["user", "assistant"]), contents)

#: Tool cases: name -> (return annotation, values of that type).
TOOL_CASES: dict[str, tuple[object, st.SearchStrategy[Any]]] = {
    "str": (str, plain_text),
    "int": (int, st.integers()),
    "float": (float, st.one_of(finite, st.integers(-(2**53), 2**53))),
    "bool": (bool, st.booleans()),
    "list_int": (list[int], st.lists(st.integers(), max_size=5)),
    "tuple_str": (tuple[str, ...], st.lists(plain_text, max_size=5).map(tuple)),
    "set_int": (set[int], st.sets(st.integers(), max_size=5)),
    "frozenset_str": (frozenset[str], st.frozensets(plain_text, max_size=5)),
    "dict_float": (dict[str, float], st.dictionaries(plain_text, finite, max_size=4)),
    "optional_int": (int | None, st.one_of(st.none(), st.integers())),
    "literal": (Literal["a", "b"], st.sampled_from(["a", "b"])),
    "enum": (Color, st.sampled_from(Color)),
    "attrs": (Point, st.builds(Point, st.integers(), st.integers())),
    "tagged_union": (
        Circle | Square,
        st.one_of(st.builds(Circle, finite), st.builds(Square, finite)),
    ),
    "newtype": (UserId, plain_text.map(UserId)),
    "datetime": (datetime.datetime, aware),
    "date": (datetime.date, st.dates()),
    "uuid": (uuid.UUID, st.uuids()),
    "secret": (Secret[str], plain_text.map(Secret)),
    "bounded": (Annotated[int, Field(ge=0, le=10)], st.integers(0, 10)),
    "content": (Content, contents),
    "content_list": (list[Content], st.lists(contents, max_size=3)),
}

#: Prompt cases: name -> (return annotation, values of that type).
PROMPT_CASES: dict[str, tuple[object, st.SearchStrategy[Any]]] = {
    "prompt_str": (str, plain_text),
    "prompt_message": (PromptMessage, messages),
    "prompt_messages": (list[PromptMessage], st.lists(messages, max_size=3)),
}

#: Resource cases: name -> (return annotation, values of that type).
RESOURCE_CASES: dict[str, tuple[object, st.SearchStrategy[Any]]] = {
    "resource_str": (str, plain_text),
    "resource_bytes": (bytes, st.binary(max_size=20)),
    "resource_json": (Point, st.builds(Point, st.integers(), st.integers())),
    "resource_json_list": (list[float], st.lists(finite, max_size=4)),
    "resource_contents": (
        list[TextResourceContents | BlobResourceContents],
        st.lists(
            st.one_of(
                st.builds(TextResourceContents, st.just("value://x"), plain_text),
                st.builds(
                    BlobResourceContents, st.just("value://x"), st.binary(max_size=9)
                ),
            ),
            max_size=3,
        ),
    ),
}

CASES = {**TOOL_CASES, **PROMPT_CASES, **RESOURCE_CASES}

# -- hostile values ----------------------------------------------------------------------
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([10**4299, -(10**4299), 2**63, -(2**63) - 1]),
    st.floats(),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
    texts,
    st.binary(max_size=10),
    aware,
    st.datetimes(),
    st.dates(),
    st.uuids(),
    st.sampled_from(Color),
    st.builds(Point, st.integers(), st.integers()),
    st.builds(Circle, st.floats()),
    plain_text.map(Secret),
    contents,
    messages,
    st.just(Opaque()),
)
hashable = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts)
junk = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.sets(hashable, max_size=3),
        st.dictionaries(texts, children, max_size=3),
        st.dictionaries(hashable, children, max_size=3),
    ),
    max_leaves=8,
)


def _returning(name: str, annotation: object) -> Callable[[], Any]:
    """A handler declared ``-> annotation`` that returns ``VALUES[name]``."""

    def handler() -> Any:
        return VALUES[name]

    handler.__name__ = handler.__qualname__ = f"returns_{name}"
    handler.__doc__ = f"Return the value the test put under '{name}'."
    handler.__annotations__ = {"return": annotation}
    return handler


def make_server() -> Server:
    """A server with one declaration per case."""
    return Server(
        "return-values",
        "1.0.0",
        tools=[tool(_returning(n, a)) for n, (a, _) in TOOL_CASES.items()],
        prompts=[prompt(_returning(n, a)) for n, (a, _) in PROMPT_CASES.items()],
        resources=[
            resource(uri=f"value://{n}")(_returning(n, a))
            for n, (a, _) in RESOURCE_CASES.items()
        ],
    )


def request_for(name: str) -> Call:
    """The request that makes case ``name``'s declaration return its value."""
    if name in TOOL_CASES:
        return Call(
            "tools/call", {"name": f"returns_{name}", "arguments": {}, "_meta": META}
        )
    if name in PROMPT_CASES:
        return Call("prompts/get", {"name": f"returns_{name}", "_meta": META})
    return Call("resources/read", {"uri": f"value://{name}", "_meta": META})


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    with serving(InProcessTarget, make_server) as running:
        yield running


@pytest.fixture(scope="module")
def output_schemas(target: Target) -> dict[str, Any]:
    """Each tool's advertised ``outputSchema``, as a client reads it from tools/list."""
    batch = target.exchange([Call("tools/list", {"_meta": META})], variants=False)
    tools = target.reply(batch.ids[0])["result"]["tools"]
    return {t["name"]: t.get("outputSchema") for t in tools}


class BrokenContract(AssertionError):
    """A result that does not keep the declared type's contract."""


class RefusedGoodValue(AssertionError):
    """A value of the declared type was answered with an error."""


def validate(schema: Any, value: Any, what: str) -> None:
    """Validate ``value`` against ``schema`` with formats asserted."""
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    problems = [e.message for e in validator.iter_errors(value)]
    if problems:
        raise BrokenContract(f"{what} breaks its schema {schema}: {problems[:3]}")


def check_tool(result: dict[str, Any], schema: Any) -> None:
    if result.get("isError"):
        raise BrokenContract(f"a returned value became an isError result: {result}")
    if schema is None:
        return
    structured = result.get("structuredContent")
    validate(schema, structured, f"structuredContent {structured!r}")
    text = [b["text"] for b in result["content"] if b.get("type") == "text"]
    try:
        if isinstance(structured, str) and _is_str(schema):  # the text itself
            same = text == [structured]
        else:
            same = [strict_json(t) for t in text] == [structured]
    except ValueError:
        same = False
    if not same:
        raise BrokenContract(
            f"the text block {text!r} is not the JSON of {structured!r}"
        )


def _is_str(schema: Any) -> bool:
    """Whether an output schema is a ``str``'s (optional or not): no format, enum
    or ``writeOnly``, as a date, a Literal or a secret has."""
    branches = [b for b in schema.get("anyOf", [schema]) if b != {"type": "null"}]
    return (
        len(branches) == 1
        and branches[0].get("type") == "string"
        and not ({"format", "enum", "writeOnly"} & branches[0].keys())
    )


def conforms(name: str, value: Any) -> bool:
    """Whether ``value`` has the declared type, for prompts and text/blob resources."""
    if name in ("prompt_str", "resource_str"):
        return isinstance(value, str)
    if name == "resource_bytes":
        return isinstance(value, bytes)
    if name == "prompt_message":
        return isinstance(value, PromptMessage)
    # A list is declared; any sequence of the right items keeps the contract.
    if name == "prompt_messages":
        return isinstance(value, list | tuple) and all(
            isinstance(m, PromptMessage) for m in value
        )
    if name == "resource_contents":
        kinds = TextResourceContents | BlobResourceContents
        return isinstance(value, list | tuple) and all(
            isinstance(c, kinds) for c in value
        )
    raise AssertionError(name)


def check_reply(
    name: str, value: Any, reply: dict[str, Any], schemas: dict[str, Any]
) -> None:
    """The contract of one reply to a returned ``value``; raise what it breaks."""
    if "error" in reply:
        if reply["error"]["code"] != -32603:
            raise BrokenContract(f"error {reply['error']} where only -32603 may be")
        return
    result = reply["result"]
    if name in TOOL_CASES:
        check_tool(result, schemas[f"returns_{name}"])
    elif name in ("resource_json", "resource_json_list"):
        annotation = RESOURCE_CASES[name][0]
        for item in result["contents"]:
            validate(
                json_schema(annotation), json.loads(item["text"]), f"{item['text']!r}"
            )
    elif not conforms(name, value):
        raise BrokenContract(f"{value!r} is not the declared type, yet got {result}")


def serve(target: Target, name: str, value: Any) -> dict[str, Any]:
    """Make case ``name`` return ``value``; return the reply (wire invariants checked)."""
    VALUES[name] = value
    batch = target.exchange([request_for(name)], variants=False)
    return target.reply(batch.ids[0])


@pytest.mark.parametrize("name", list(CASES))
def test_any_returned_value_is_served_or_refused(
    target: Target, output_schemas: dict[str, Any], name: str
) -> None:
    @fuzz_settings(share=1 / 3)
    @given(st.one_of(CASES[name][1], junk))
    def returned(value: Any) -> None:
        check_reply(name, value, serve(target, name, value), output_schemas)

    run_rounds(returned)


@pytest.mark.parametrize("name", list(CASES))
def test_values_of_the_declared_type_are_served(
    target: Target, output_schemas: dict[str, Any], name: str
) -> None:
    @fuzz_settings(share=1 / 6)
    @given(CASES[name][1])
    def returned(value: Any) -> None:
        reply = serve(target, name, value)
        if "error" in reply:
            raise RefusedGoodValue(f"{value!r} was refused: {reply['error']}")
        check_reply(name, value, reply, output_schemas)

    run_rounds(returned)
