"""Multi round-trip requests end to end (mcp-2026-07-28.md §7), through McpTestClient."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from support import wire
from support.mrtr_server import ALL_CAPS, make_server

from trio_mcp import (
    Elicit,
    ElicitResult,
    ElicitUrl,
    NeedsInput,
    Server,
    ToolContext,
    tool,
)
from trio_mcp.testing import McpTestClient, ProtocolError, ToolResult


@attrs.frozen
class Name:
    name: str


ALICE = {"action": "accept", "content": {"name": "Alice"}}


async def call(client: McpTestClient, name: str, **kw: Any) -> dict[str, Any]:
    result = await client.call_tool(name, **kw)
    raw: dict[str, Any] = result.raw
    return raw


async def answer(
    client: McpTestClient, name: str, previous: Any, responses: dict[str, Any]
) -> ToolResult:
    """Call ``name`` again with ``responses`` and the ``previous`` round's
    ``requestState``."""
    return await client.call_tool(
        name, input_responses=responses, request_state=previous["requestState"]
    )


async def two_rounds(
    name: str, responses: dict[str, Any]
) -> tuple[dict[str, Any], ToolResult]:
    """Call ``name``, then ``answer`` it with ``responses``; both rounds' results."""
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        first = await call(client, name)
        second = await answer(client, name, first, responses)
    return first, second


def assert_says(result: ToolResult, expected: str) -> None:
    """The result's structured content is ``expected``, and so is its text."""
    assert result.structured == expected
    assert result.text == expected


async def test_one_round_asks_then_completes_with_the_typed_answer() -> None:
    """Spec-mandated shape; the typed ElicitResult is our choice."""
    first, second = await two_rounds("greet", {"user_name": ALICE})

    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
        }
    }
    assert "ttlMs" not in first
    assert "cacheScope" not in first
    assert "io.modelcontextprotocol/serverInfo" in first["_meta"]
    assert second.raw["resultType"] == "complete"
    assert_says(second, "Hello, Alice!")


async def test_declined_elicitation_gives_no_content() -> None:
    _, second = await two_rounds("greet", {"user_name": {"action": "decline"}})

    assert_says(second, "no name (decline)")


async def test_three_rounds_carry_state_and_change_request_state() -> None:
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        r1 = await call(client, "wizard")
        r2 = wire((await answer(client, "wizard", r1, {"step1": ALICE})).raw)
        blue = {"action": "accept", "content": {"color": "blue"}}
        r3 = await answer(client, "wizard", r2, {"step2": blue})

    assert list(r1["inputRequests"]) == ["step1"]
    assert list(r2["inputRequests"]) == ["step2"]
    assert r1["requestState"] != r2["requestState"]
    assert_says(r3, "Alice likes blue")


async def test_several_inputs_in_one_round_decode_each_to_its_type() -> None:
    capital = {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "test-model",
        "stopReason": "endTurn",
    }
    roots = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}
    first, second = await two_rounds(
        "everything", {"who": ALICE, "capital": capital, "roots": roots}
    )

    methods = sorted(r["method"] for r in first["inputRequests"].values())
    assert methods == ["elicitation/create", "roots/list", "sampling/createMessage"]
    expected = (
        "UserName(name='Alice') Paris test-model "
        "[Root(uri='file:///test/root', name='Test Root')]"
    )
    assert_says(second, expected)


async def test_every_form_field_kind_decodes_into_the_attrs_class() -> None:
    content = {"quantity": 2, "size": "large", "gift": True, "deliver_on": "2026-08-01"}
    _, second = await two_rounds(
        "order", {"order": {"action": "accept", "content": content}}
    )

    assert_says(
        second,
        "Order(quantity=2, size=<Size.LARGE: 'large'>, gift=True, "
        "deliver_on=datetime.date(2026, 8, 1))",
    )


async def test_a_missing_response_makes_the_handler_ask_again() -> None:
    """Spec SHOULD (§7.2 rule 6): a new InputRequiredResult, not an error."""
    _, second = await two_rounds("greet", {"wrong_key": ALICE})

    again = wire(second.raw)
    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == ["user_name"]


async def test_unknown_response_keys_are_ignored() -> None:
    _, second = await two_rounds("greet", {"user_name": ALICE, "extra": {"x": 1}})

    assert_says(second, "Hello, Alice!")


@pytest.mark.parametrize(
    "responses",
    [
        {"user_name": 12345},
        {"user_name": {"action": "maybe"}},
        {"user_name": {"action": "accept"}},
        {"user_name": {"action": "accept", "content": {"name": 5}}},
        {"user_name": {"action": "accept", "content": {"nom": "Alice"}}},
    ],
)
async def test_a_malformed_response_is_invalid_params(
    responses: dict[str, Any],
) -> None:
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        first = await call(client, "greet")
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool(
                "greet", input_responses=responses, request_state=first["requestState"]
            )

    assert caught.value.code == -32602
    assert caught.value.message.startswith("invalid inputResponses")


async def test_input_responses_null_is_invalid_params() -> None:
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        first = await call(client, "greet")
        meta = client.meta()
        with pytest.raises(ProtocolError) as caught:
            await client.request(
                "tools/call",
                {
                    "name": "greet",
                    "_meta": meta,
                    "inputResponses": None,
                    "requestState": first["requestState"],
                },
            )

    assert caught.value.code == -32602


async def test_responses_without_request_state_run_the_handler_once_and_ask() -> None:
    """Our choice (issue 24, class 7.4): responses sent without the first round's
    ``requestState`` answer nothing asked yet. The handler runs once in the request
    (never twice) and the client is asked again (spec §7.2 rule 6: re-request)."""
    runs: list[object] = []

    @tool
    def ask_name() -> str | NeedsInput:
        """Ask for a name, counting each run.

        Returns the greeting once the name is known.
        """
        runs.append(ToolContext.current().request_id)
        answer = ToolContext.current().input_responses.get("user_name")
        if isinstance(answer, ElicitResult) and isinstance(answer.content, Name):
            return f"Hello, {answer.content.name}!"
        return NeedsInput({"user_name": Elicit("What is your name?", schema=Name)})

    server = Server("once", "1", tools=[ask_name])
    async with McpTestClient(server, client_capabilities=ALL_CAPS) as client:
        again = await call(
            client, "ask_name", input_responses={"user_name": ALICE, "extra": {}}
        )

    assert "input_required" == again["resultType"]
    assert ["user_name"] == list(again["inputRequests"])
    assert 1 == len(runs)


@pytest.mark.parametrize(
    "responses",
    [{"wrong_key": ALICE}, {"user_name": 12345}, {"user_name": {"action": "accept"}}],
)
async def test_unsolicited_responses_that_do_not_fit_are_asked_again(
    responses: dict[str, Any],
) -> None:
    """Spec SHOULD (§7.2 rule 6): re-request rather than fail."""
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        again = await call(client, "greet", input_responses=responses)

    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == ["user_name"]


async def test_asking_for_an_undeclared_capability_is_32021() -> None:
    """Spec-mandated (§7.2 rule 3, §2.1): data.requiredCapabilities is an object."""
    async with McpTestClient(
        make_server(), client_capabilities={"sampling": {}}
    ) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("greet")

    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}


async def test_url_only_elicitation_does_not_cover_forms() -> None:
    caps: dict[str, Any] = {"elicitation": {"url": {}}}
    async with McpTestClient(make_server(), client_capabilities=caps) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("greet")

    assert caught.value.code == -32021


async def test_several_missing_capabilities_are_reported_together() -> None:
    async with McpTestClient(make_server(), client_capabilities={}) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("everything")

    assert -32021 == caught.value.code
    assert caught.value.data == {
        "requiredCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}}
    }
    assert (
        "this request needs input the client cannot give: declare elicitation, "
        "roots, sampling in _meta clientCapabilities"
    ) == caught.value.message


async def test_a_handler_can_ask_only_for_what_the_client_supports() -> None:
    async with McpTestClient(
        make_server(), client_capabilities={"sampling": {}}
    ) as client:
        first = await call(client, "polite")

    assert first["resultType"] == "input_required"
    assert [r["method"] for r in first["inputRequests"].values()] == [
        "sampling/createMessage"
    ]


async def two_requests(
    method: str, params: dict[str, Any], responses: dict[str, Any]
) -> tuple[Any, Any]:
    """Request ``method`` with ``params``, then again with ``responses`` and the
    first reply's ``requestState``; both results."""
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        first = await client.request(method, params)
        again = {
            **params,
            "inputResponses": responses,
            "requestState": first["requestState"],
        }
        second = await client.request(method, again)
    return first, second


async def test_a_prompt_may_need_input() -> None:
    first, second = await two_requests(
        "prompts/get", {"name": "with_context"}, {"user_context": ALICE}
    )

    assert first["resultType"] == "input_required"
    assert second["resultType"] == "complete"
    assert wire(second)["messages"][0]["content"]["text"] == "context: Alice"


async def test_a_resource_read_may_need_input() -> None:
    first, second = await two_requests(
        "resources/read", {"uri": "test://gated"}, {"roots": {"roots": []}}
    )

    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"roots": {"method": "roots/list", "params": {}}}
    assert "ttlMs" not in first
    assert wire(second)["contents"][0]["text"] == "roots: []"


@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ],
)
async def test_list_methods_never_return_input_required(method: str, key: str) -> None:
    """Spec-mandated (§7.2 rule 1)."""
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        result = await client.request(
            method, {"inputResponses": {}, "requestState": "x"}
        )

    assert result["resultType"] == "complete"
    assert key in result


@attrs.frozen
class Word:
    word: str


@tool
def two_words() -> str | NeedsInput:
    """Ask for two words; say which answers came back once any did."""
    answers = ToolContext.current().input_responses
    if answers:
        return " ".join(
            f"{key}={value.content.word}"  # type: ignore[attr-defined]
            for key, value in sorted(answers.items())
        )
    return NeedsInput({"a": Elicit("First?", Word), "b": Elicit("Second?", Word)})


def word(text: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"word": text}}


@pytest.mark.parametrize(
    ("responses", "says"),
    [({"b": word("late")}, "b=late"), ({"a": word("x"), "b": word("y")}, "a=x b=y")],
)
async def test_each_answered_key_is_read_whichever_are_left_out(
    responses: dict[str, Any], says: str
) -> None:
    """An answer to the second request arrives although the first was left out."""
    server = Server("words", "1", tools=[two_words])
    async with McpTestClient(server, client_capabilities=ALL_CAPS) as client:
        first = await call(client, "two_words")
        second = await answer(client, "two_words", first, responses)

    assert_says(second, says)


async def test_every_answer_that_does_not_fit_is_one_line_of_the_message() -> None:
    server = Server("words", "1", tools=[two_words])
    async with McpTestClient(server, client_capabilities=ALL_CAPS) as client:
        first = await call(client, "two_words")
        with pytest.raises(ProtocolError) as caught:
            await answer(client, "two_words", first, {"a": word(1), "b": word(2)})

    lines = caught.value.message.splitlines()
    assert "invalid inputResponses:" == lines[0]
    data: Any = caught.value.data
    problems = data["problems"]
    assert ["inputResponses.a.content.word", "inputResponses.b.content.word"] == [
        p["path"] for p in problems
    ]
    assert [f"- {p['path']}: {p['message']}" for p in problems] == lines[1:]


@pytest.mark.parametrize("responses", [None, [ALICE], "user_name"])
async def test_input_responses_that_are_no_object_say_what_they_must_be(
    responses: Any,
) -> None:
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        first = await call(client, "greet")
        with pytest.raises(ProtocolError) as caught:
            await client.request(
                "tools/call",
                {
                    "name": "greet",
                    "_meta": client.meta(),
                    "inputResponses": responses,
                    "requestState": first["requestState"],
                },
            )

    assert -32602 == caught.value.code
    assert "inputResponses must be an object of responses by key" == (
        caught.value.message
    )


@tool
def sign_in() -> str | NeedsInput:
    """Ask for a name in a form and to open the sign-in page."""
    return NeedsInput(
        {
            "who": Elicit("Who?", Name),
            "page": ElicitUrl("Sign in", "https://example.com/sign-in"),
        }
    )


@pytest.mark.parametrize(
    ("capabilities", "missing"),
    [
        ({}, {"elicitation": {"url": {}}}),
        ({"elicitation": {}}, {"elicitation": {"url": {}}}),
        ({"elicitation": {"url": {}}}, {"elicitation": {}}),
    ],
)
async def test_missing_capabilities_of_one_kind_are_merged(
    capabilities: dict[str, Any], missing: dict[str, Any]
) -> None:
    """A form and a URL elicitation: one ``elicitation`` entry in
    ``requiredCapabilities`` with what each needs."""
    server = Server("sign", "1", tools=[sign_in])
    async with McpTestClient(server, client_capabilities=capabilities) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("sign_in")

    assert -32021 == caught.value.code
    assert {"requiredCapabilities": missing} == caught.value.data
    assert (
        "this request needs input the client cannot give: declare elicitation in "
        "_meta clientCapabilities"
    ) == caught.value.message
