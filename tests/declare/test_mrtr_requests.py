"""Input request helpers: wire shapes, form restrictions, capabilities, NeedsInput."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

import attrs
import pytest

from trio_mcp import (
    Answer,
    Elicit,
    ElicitResult,
    ElicitUrl,
    Field,
    ListRoots,
    MissingClientCapability,
    NeedsInput,
    PromptMessage,
    Sample,
    SampleResult,
    Secret,
    ToolContext,
)


@attrs.frozen
class Contact:
    email: Annotated[str, Field(json_schema={"format": "email"}, max_length=80)]
    age: Annotated[int, Field(ge=0, le=150)]
    score: float
    subscribe: bool
    topics: list[Literal["news", "offers"]]
    when: datetime | None = None
    channel: Literal["mail", "phone"] = "mail"


def test_a_form_covers_every_flat_field_kind() -> None:
    params = Elicit("Contact?", Contact).to_wire()["params"]
    assert isinstance(params, dict)
    schema = params["requestedSchema"]

    assert schema == {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "maxLength": 80},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "score": {"type": "number"},
            "subscribe": {"type": "boolean"},
            "topics": {
                "type": "array",
                "items": {"type": "string", "enum": ["news", "offers"]},
            },
            "when": {"type": "string", "format": "date-time"},
            "channel": {"type": "string", "enum": ["mail", "phone"], "default": "mail"},
        },
        "required": ["email", "age", "score", "subscribe", "topics"],
    }


@attrs.frozen
class Nested:
    contact: Contact


@attrs.frozen
class Listy:
    names: list[str]


@attrs.frozen
class Ident:
    id: UUID


@attrs.frozen
class Password:
    password: Secret[str]


@attrs.frozen
class Patterned:
    code: Annotated[str, Field(pattern="^[A-Z]+$")]


@attrs.frozen
class Either:
    value: int | str


@pytest.mark.parametrize(
    ("cls", "words"),
    [
        (Nested, "not a flat form field"),
        (Listy, "multi-select"),
        (Ident, "format"),
        (Password, "secret"),
        (Patterned, "pattern"),
        (Either, "union"),
    ],
)
def test_a_form_refuses_what_elicitation_cannot_express(cls: type, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        Elicit("?", cls)


def test_a_form_schema_must_be_an_attrs_class() -> None:
    with pytest.raises(TypeError, match="attrs class"):
        Elicit("?", dict)


def test_url_elicitation_wire_shape() -> None:
    assert ElicitUrl("Sign in", "https://example.com/auth").to_wire() == {
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Sign in",
            "url": "https://example.com/auth",
        },
    }


def test_sampling_accepts_a_plain_prompt() -> None:
    assert Sample("What is the capital of France?", max_tokens=100).to_wire() == {
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "What is the capital of France?",
                    },
                }
            ],
            "maxTokens": 100,
        },
    }


def test_sampling_with_every_option() -> None:
    sample = Sample(
        [
            PromptMessage.user("Hi"),
            {"role": "assistant", "content": {"type": "text", "text": "Yo"}},
        ],
        max_tokens=5,
        system_prompt="Be brief.",
        temperature=0.5,
        stop_sequences=["\n"],
        model_preferences={"hints": [{"name": "claude"}]},
        metadata={"trace": "x"},
    )

    params = sample.to_wire()["params"]

    assert params == {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Hi"}},
            {"role": "assistant", "content": {"type": "text", "text": "Yo"}},
        ],
        "maxTokens": 5,
        "systemPrompt": "Be brief.",
        "temperature": 0.5,
        "stopSequences": ["\n"],
        "modelPreferences": {"hints": [{"name": "claude"}]},
        "metadata": {"trace": "x"},
    }


def test_list_roots_wire_shape() -> None:
    assert ListRoots().to_wire() == {"method": "roots/list", "params": {}}


@pytest.mark.parametrize(
    ("request_type", "needs"),
    [
        (Elicit, {"elicitation": {}}),
        (ElicitUrl, {"elicitation": {"url": {}}}),
        (Sample, {"sampling": {}}),
        (ListRoots, {"roots": {}}),
    ],
)
def test_each_request_names_the_client_capability_it_needs(
    request_type: type, needs: dict[str, object]
) -> None:
    assert needs == request_type.client_capability  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("declared", "need", "expected"),
    [
        ({"elicitation": {}}, Elicit, True),
        ({"elicitation": {"form": {}}}, Elicit, True),
        ({"elicitation": {"url": {}}}, Elicit, False),
        ({"elicitation": {"form": {}, "url": {}}}, Elicit, True),
        ({"elicitation": {}}, ElicitUrl, False),
        ({"elicitation": {"url": {}}}, ElicitUrl, True),
        ({"sampling": {}}, Sample, True),
        ({"sampling": {}}, Elicit, False),
        ({"roots": {"listChanged": True}}, ListRoots, True),
        ({}, {"sampling": {"tools": {}}}, False),
        ({"sampling": {"tools": {}}}, {"sampling": {"tools": {}}}, True),
    ],
)
def test_supports_reads_the_requests_client_capabilities(
    declared: dict[str, object], need: object, expected: bool
) -> None:
    ctx = ToolContext(request_id=1, client_capabilities=declared)  # type: ignore[arg-type]

    assert expected == ctx.supports(need)


def test_require_client_raises_with_the_required_capabilities() -> None:
    ctx = ToolContext(request_id=1)

    with pytest.raises(MissingClientCapability) as caught:
        ctx.require_client(Sample)

    assert caught.value.required == {"sampling": {}}


def test_supports_rejects_what_is_not_a_need() -> None:
    with pytest.raises(TypeError):
        ToolContext().supports(42)


def test_outside_a_call_nothing_is_supported() -> None:
    assert not ToolContext.current().supports(Elicit)


def test_answer_needs_input_is_an_alias() -> None:
    assert Answer.needs_input({"r": ListRoots()}, state=[1]) == NeedsInput(
        {"r": ListRoots()}, [1]
    )


def test_needs_input_refuses_what_is_not_an_input_request() -> None:
    with pytest.raises(TypeError, match="Elicit, ElicitUrl, Sample or ListRoots"):
        NeedsInput({"x": "please"})  # type: ignore[dict-item]


def test_needs_input_refuses_state_that_is_not_json() -> None:
    with pytest.raises(TypeError, match="JSON"):
        NeedsInput({}, state={"when": datetime(2026, 1, 1)})  # type: ignore[dict-item]


def test_a_url_elicitation_answer_has_no_content() -> None:
    from trio_mcp._declare import read_response

    answer = read_response(
        ElicitUrl("Go", "https://x.example").descriptor(),
        {"action": "accept", "content": {"x": 1}},
    )

    assert answer == ElicitResult("accept", None)


@pytest.mark.parametrize(
    ("request_", "raw"),
    [
        (Sample("q", max_tokens=1), {"role": "bot", "content": "x", "model": 1}),
        (
            Sample("q", max_tokens=1),
            {"role": "assistant", "content": {}, "model": "m", "stopReason": 3},
        ),
        (ListRoots(), {"roots": "none"}),
        (ListRoots(), {"roots": [{"name": "no uri"}]}),
    ],
)
def test_malformed_sampling_and_roots_answers_are_refused(
    request_: object, raw: Any
) -> None:
    from trio_mcp import DecodeError
    from trio_mcp._declare import read_response

    with pytest.raises(DecodeError):
        read_response(request_.descriptor(), raw)  # type: ignore[attr-defined]


def test_sample_result_text_joins_text_blocks() -> None:
    result = SampleResult(
        "assistant",
        [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "", "mimeType": "x"},
            {"type": "text", "text": "b"},
        ],
        "m",
    )

    assert result.text == "a\nb"
