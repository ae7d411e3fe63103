"""``Field(json_schema=...)``: 2020-12 keywords the type table cannot derive, shown
verbatim in the schema and enforced when decoding.

``record_contact`` is the decorated equivalent of the conformance fixture's
hand-written ``VerbatimSchemaTool`` (the ``json-schema-2020-12`` scenario): ``$defs``
with an ``$anchor``, a ``$ref`` into them, ``enum``, ``anyOf`` inside ``allOf``,
``if``/``then``/``else``, plus ``const`` and an ``anyOf`` over two JSON types.
"""

import json
from typing import Annotated, Any, Literal

import attrs
import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import wire

from trio_mcp import (
    DecodeError,
    Field,
    InvalidDeclaration,
    Server,
    decode,
    json_schema,
    tool,
)
from trio_mcp._schema import asserts
from trio_mcp.testing import McpTestClient

ADDRESS = {
    "$anchor": "addressDef",
    "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
}

#: Cross-field rules of a contact: JSON Schema can say them, the type table cannot.
CONTACT_RULES = {
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}

PRIORITY = {
    "anyOf": [
        {"type": "integer", "minimum": 1, "maximum": 5},
        {"type": "string", "enum": ["low", "high"]},
    ]
}


@attrs.frozen
class Address:
    street: str | None = None
    city: str | None = None


@attrs.frozen
class Contact:
    contactMethod: Literal["phone", "email"]
    phone: str | None = None
    email: str | None = None
    address: (
        Annotated[
            Address,
            Field(
                json_schema={"$defs": {"address": ADDRESS}, "$ref": "#/$defs/address"}
            ),
        ]
        | None
    ) = None


recorded: list[tuple[str, Contact, object, str]] = []


@tool
def record_contact(
    name: str,
    contact: Annotated[Contact, Field(json_schema=CONTACT_RULES)],
    priority: Annotated[Any, Field(json_schema=PRIORITY)] = 3,
    kind: Annotated[str, Field(json_schema={"const": "contact"})] = "contact",
) -> str:
    """Record how to contact someone.

    Args:
        name: Who to contact.
        contact: How to reach them: a phone number when the method is phone, an
            email address otherwise.
        priority: 1 to 5, or "low" or "high".
        kind: Always "contact".
    """
    recorded.append((name, contact, priority, kind))
    return f"recorded {name}"


SERVER = Server("contacts", "1", tools=[record_contact])


async def test_the_passthrough_keywords_are_listed_verbatim_with_defs_at_the_root() -> (
    None
):
    async with McpTestClient(SERVER) as client:
        (listed,) = await client.list_tools()

    schema = listed["inputSchema"]
    contact = wire(schema)["properties"]["contact"]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert {"address": ADDRESS} == wire(schema)["$defs"]
    assert {key: wire(contact)[key] for key in CONTACT_RULES} == CONTACT_RULES
    assert (
        "#/$defs/address" == wire(contact)["properties"]["address"]["anyOf"][0]["$ref"]
    )
    assert PRIORITY["anyOf"] == wire(schema)["properties"]["priority"]["anyOf"]
    assert "contact" == wire(schema)["properties"]["kind"]["const"]


GOOD = [
    {"name": "Ann", "contact": {"contactMethod": "phone", "phone": "555"}},
    {
        "name": "Bo",
        "contact": {
            "contactMethod": "email",
            "email": "bo@example.com",
            "address": {"street": "Main", "city": "Oslo"},
        },
        "priority": "high",
    },
    {
        "name": "Cy",
        "contact": {"contactMethod": "email", "email": "c@x"},
        "priority": 5,
    },
]


@pytest.mark.parametrize("arguments", GOOD)
async def test_arguments_that_fit_reach_the_handler_typed(
    arguments: dict[str, Any],
) -> None:
    recorded.clear()
    async with McpTestClient(SERVER) as client:
        result = await client.call_tool("record_contact", arguments)

    assert not result.is_error, result.text
    ((name, contact, priority, kind),) = recorded
    assert arguments["name"] == name
    assert isinstance(contact, Contact)
    assert arguments["contact"]["contactMethod"] == contact.contactMethod
    assert arguments.get("priority", 3) == priority
    assert "contact" == kind
    # The same arguments satisfy the listed schema, as any client would check them.
    jsonschema.validate(arguments, record_contact.spec().input_schema)


BAD = [
    (
        {"contactMethod": "phone", "email": "a@b"},
        {},
        ["contact.phone: this field is required"],
    ),
    (
        {"contactMethod": "email", "phone": "555"},
        {},
        ["contact.email: this field is required"],
    ),
    (
        {"contactMethod": "email", "email": "a@b", "address": {"street": 7}},
        {},
        [  # the derived type and the $defs entry each say what they expect
            "contact.address.street: expected a string or null",
            "contact.address.street: expected a string",
        ],
    ),
    (
        {"contactMethod": "fax", "email": "a@b"},
        {},
        ['contact.contactMethod: must be one of: "phone", "email"'],
    ),
    (
        {"contactMethod": "email", "email": "a@b"},
        {"priority": 9, "kind": "other"},
        ["priority: must be at most 5", 'kind: must be "contact"'],
    ),
    (
        {"contactMethod": "email", "email": "a@b"},
        {"priority": "urgent"},
        ['priority: must be one of: "low", "high"'],
    ),
    (
        {"contactMethod": "phone"},
        {"priority": None},
        [
            "contact: must match at least one of the allowed schemas",
            "contact.phone: this field is required",
            "priority: must match at least one of the allowed schemas",
        ],
    ),
]


@pytest.mark.parametrize(("contact", "extra", "expected"), BAD)
async def test_every_broken_keyword_is_reported_and_the_handler_never_runs(
    contact: dict[str, Any], extra: dict[str, Any], expected: list[str]
) -> None:
    recorded.clear()
    arguments = {"name": "Dee", "contact": contact, **extra}
    async with McpTestClient(SERVER) as client:
        result = await client.call_tool("record_contact", arguments)

    assert result.is_error
    problems = {
        f"{wire(p)['path']}: {p['message']}"
        for p in wire(result.meta)["dev.trio-mcp/error"]["problems"]
    }
    assert set(expected) == problems
    assert [] == recorded
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(arguments, record_contact.spec().input_schema)


async def test_a_secret_value_never_appears_in_a_verbatim_message() -> None:
    arguments = {"name": "Eve", "contact": {"contactMethod": "phone", "phone": 12345}}
    async with McpTestClient(SERVER) as client:
        result = await client.call_tool("record_contact", arguments)

    assert result.is_error
    assert "12345" not in json.dumps(result.raw)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(-10, 10)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
) | st.sampled_from(["low", "high", 1, 5, 5.0, 6, 0, "LOW"])

OPEN = Annotated[Any, Field(json_schema=PRIORITY)]
TYPED = Annotated[
    int | None, Field(json_schema={"anyOf": [{"type": "null"}, {"multipleOf": 3}]})
]


@pytest.mark.parametrize("tp", [OPEN, TYPED], ids=["any", "int-or-none"])
@given(value=JSON_VALUES)
def test_decoding_accepts_exactly_what_the_schema_accepts(
    tp: object, value: Any
) -> None:
    """Property: the one contract of the type table holds for passthroughs too."""
    accepted_by_schema = jsonschema.Draft202012Validator(json_schema(tp)).is_valid(
        value
    )
    try:
        decoded = decode(tp, value)
    except DecodeError:
        accepted = False
    else:
        accepted = True
        assert decoded == value

    assert accepted_by_schema is accepted


@pytest.mark.parametrize(
    ("passthrough", "words"),
    [
        ({"$ref": "https://example.com/s.json"}, "is not local"),
        ({"$ref": "#/$defs/missing"}, "names no entry"),
        ({"$ref": "#/properties/name"}, "is not local"),
        ({"$id": "urn:x", "type": "string"}, "leave out $id"),
        (
            {"$schema": "https://json-schema.org/draft/2020-12/schema"},
            "leave out $schema",
        ),
    ],
)
def test_an_unsound_passthrough_is_refused_at_decoration(
    passthrough: dict[str, Any], words: str
) -> None:
    with pytest.raises(InvalidDeclaration, match=r"Field\(json_schema=...\)") as info:

        @tool
        def bad(value: Annotated[str, Field(json_schema=passthrough)]) -> str:
            """Bad.

            Args:
                value: A value.
            """
            return value

    assert words in str(info.value)


def test_two_passthroughs_may_not_define_one_name_differently() -> None:
    one = {"$defs": {"x": {"type": "string"}}, "$ref": "#/$defs/x"}
    other = {"$defs": {"x": {"type": "integer"}}, "$ref": "#/$defs/x"}
    same = {"$defs": {"x": {"type": "string"}}, "$ref": "#/$defs/x"}

    @attrs.frozen
    class Clash:
        a: Annotated[str, Field(json_schema=one)]
        b: Annotated[str, Field(json_schema=other)]

    @attrs.frozen
    class Shared:
        a: Annotated[str, Field(json_schema=one)]
        b: Annotated[str, Field(json_schema=same)]

    with pytest.raises(TypeError, match="define it differently"):
        json_schema(Clash)
    assert {"x": {"type": "string"}} == json_schema(Shared)["$defs"]
    assert Shared("p", "q") == decode(Shared, {"a": "p", "b": "q"})


def test_any_without_an_asserting_passthrough_is_still_refused() -> None:
    with pytest.raises(TypeError, match="Annotated"):
        json_schema(Annotated[Any, Field(json_schema={"description": "anything"})])


@pytest.mark.parametrize(
    ("passthrough", "enforced"),
    [
        ({"x-mcp-header": "Region"}, False),
        ({"examples": ["a"], "description": "d", "format": "email"}, False),
        ({"$defs": {"a": {}}}, False),
        ({"const": 1}, True),
        ({"$ref": "#/$defs/a", "$defs": {"a": {}}}, True),
        ({"if": {}, "then": {}}, True),
    ],
)
def test_only_asserting_keywords_make_decoding_validate(
    passthrough: dict[str, Any], enforced: bool
) -> None:
    """The fast path: a purely descriptive passthrough costs decoding nothing."""
    assert enforced is asserts(passthrough)
