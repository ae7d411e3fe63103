"""``complete=`` on prompts and resource templates, answered by ``completion/complete``."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import trio
from support import wire

from trio_mcp import (
    Capability,
    InvalidDeclaration,
    PromptArgument,
    PromptGet,
    PromptMessage,
    PromptReply,
    PromptSpec,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    Server,
    prompt,
    resource,
)
from trio_mcp.testing import McpTestClient, ProtocolError

LANGUAGES = ["python", "pascal", "perl", "php", "prolog", "rust", "ruby"]
seen: list[tuple[str, dict[str, str], bool]] = []
"""What each sync completer received, and whether it ran off Trio's thread."""


def languages(value: str, context: dict[str, str]) -> list[str]:
    seen.append(
        (value, context, threading.current_thread() is not threading.main_thread())
    )
    return [name for name in LANGUAGES if name.startswith(value)]


async def versions(value: str, context: dict[str, str]) -> list[str]:
    await trio.lowlevel.checkpoint()
    by_language = {"python": ["3.11", "3.12", "3.13"], "rust": ["1.80"]}
    return [
        v
        for v in by_language.get(context.get("language", ""), [])
        if v.startswith(value)
    ]


@prompt(complete={"language": languages, "version": versions})
def explain(language: str, version: str, topic: str | None = None) -> str:
    """Explain a language feature.

    Args:
        language: The language.
        version: Its version.
        topic: What to explain.
    """
    return f"{language} {version} {topic}"


def many(value: str, context: dict[str, str]) -> list[str]:
    return [f"{value}{i}" for i in range(250)]


def endless(value: str, context: dict[str, str]) -> Iterator[str]:
    return (f"{value}{i}" for i in itertools.count())


def few(value: str, context: dict[str, str]) -> Iterator[str]:
    yield from ("a", "b", "c")


def failing(value: str, context: dict[str, str]) -> list[str]:
    raise RuntimeError("the index is gone")


def a_string(value: str, context: dict[str, str]) -> str:
    return "oops"


def numbers(value: str, context: dict[str, str]) -> list[int]:
    return [1, 2]


@prompt(
    complete={
        "many_": many,
        "endless_": endless,
        "few_": few,
        "failing_": failing,
        "string_": a_string,
        "numbers_": numbers,  # type: ignore[dict-item]
    }
)
def shapes(
    many_: str | None = None,
    endless_: str | None = None,
    few_: str | None = None,
    failing_: str | None = None,
    string_: str | None = None,
    numbers_: str | None = None,
) -> str:
    """Exercise completer result shapes.

    Args:
        many_: 250 values.
        endless_: An endless generator.
        few_: A short generator.
        failing_: Raises.
        string_: Returns a str.
        numbers_: Returns ints.
    """
    return "ok"


@resource(
    uri="repo://{owner}/{+path}", complete={"owner": lambda v, c: ["trio", "tokio"]}
)
def repo_file(owner: str, path: str) -> str:
    """A file in a repository.

    Args:
        owner: Who owns it.
        path: Where it is.
    """
    return path


class Handwritten:
    """A prompt adopter that offers completions through its spec."""

    def spec(self) -> PromptSpec:
        return PromptSpec(
            "pick_colour",
            "Pick a colour.",
            arguments=[PromptArgument("colour", "The colour.", required=True)],
            complete={"colour": lambda value, _: ["red", "green", "blue"]},
        )

    async def dispatch(self, get: PromptGet) -> PromptReply:
        return PromptReply((PromptMessage.user(get.arguments["colour"]),))


def server(**kwargs: Any) -> Server:
    return Server(
        "complete",
        "1",
        resources=[repo_file],
        prompts=[explain, shapes, Handwritten()],
        **kwargs,
    )


async def ask(
    client: McpTestClient,
    ref: dict[str, str],
    name: str,
    value: str,
    context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if context is not None:
        params["context"] = {"arguments": context}
    result: dict[str, Any] = await client.request("completion/complete", params)
    completion: dict[str, Any] = result["completion"]
    return completion


def prompt_ref(name: str) -> dict[str, str]:
    return {"type": "ref/prompt", "name": name}


async def test_a_sync_completer_runs_in_a_worker_thread_with_the_other_arguments() -> (
    None
):
    seen.clear()
    async with McpTestClient(server()) as client:
        discovered = await client.discover()
        completion = await ask(
            client,
            prompt_ref("explain"),
            "language",
            "p",
            {"version": "3", "language": "ignored", "nonsense": "dropped"},
        )

    assert {} == wire(discovered)["capabilities"]["completions"]
    assert {
        "values": ["python", "pascal", "perl", "php", "prolog"],
        "total": 5,
        "hasMore": False,
    } == completion
    assert [("p", {"version": "3"}, True)] == seen


async def test_an_async_completer_sees_the_filled_arguments() -> None:
    async with McpTestClient(server()) as client:
        completion = await ask(
            client, prompt_ref("explain"), "version", "3.1", {"language": "python"}
        )
        without_context = await ask(client, prompt_ref("explain"), "version", "")

    assert ["3.11", "3.12", "3.13"] == completion["values"]
    assert {"values": [], "total": 0, "hasMore": False} == without_context


async def test_a_template_variable_completes_and_an_argument_without_completer_is_empty() -> (
    None
):
    async with McpTestClient(server()) as client:
        owners = await ask(
            client,
            {"type": "ref/resource", "uri": "repo://{owner}/{+path}"},
            "owner",
            "t",
        )
        paths = await ask(
            client,
            {"type": "ref/resource", "uri": "repo://{owner}/{+path}"},
            "path",
            "s",
        )
        topic = await ask(client, prompt_ref("explain"), "topic", "x")

    assert ["trio", "tokio"] == owners["values"]
    assert {"values": [], "total": 0, "hasMore": False} == paths == topic


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("many_", (100, 250, True)),
        ("endless_", (100, None, True)),
        ("few_", (3, 3, False)),
    ],
)
async def test_at_most_100_values_with_total_and_has_more(
    argument: str, expected: tuple[int, int | None, bool]
) -> None:
    """Revision: values hold at most 100 items; total may exceed them."""
    async with McpTestClient(server()) as client:
        completion = await ask(client, prompt_ref("shapes"), argument, "v")

    count, total, has_more = expected
    assert count == len(completion["values"])
    assert total == completion.get("total")
    assert has_more is completion["hasMore"]


@pytest.mark.parametrize("argument", ["failing_", "string_", "numbers_"])
async def test_a_failing_completer_is_internal_error_for_that_request_only(
    argument: str,
) -> None:
    async with McpTestClient(server()) as client:
        with pytest.raises(ProtocolError) as info:
            await ask(client, prompt_ref("shapes"), argument, "v")
        after = await ask(client, prompt_ref("shapes"), "few_", "")

    assert -32603 == info.value.code
    assert "reference" in wire(info.value.data)
    assert "the index is gone" not in info.value.message
    assert ["a", "b", "c"] == after["values"]


async def test_a_hand_written_prompt_offers_completions_through_its_spec() -> None:
    async with McpTestClient(Server("h", "1", prompts=[Handwritten()])) as client:
        discovered = await client.discover()
        completion = await ask(client, prompt_ref("pick_colour"), "colour", "")

    assert "completions" in wire(discovered)["capabilities"]
    assert ["red", "green", "blue"] == completion["values"]


@pytest.mark.parametrize(
    ("ref", "name", "context"),
    [
        (prompt_ref("explain"), "colour", None),
        ({"type": "ref/resource", "uri": "repo://{owner}/{+path}"}, "branch", None),
        (prompt_ref("explain"), "language", {"version": 3}),
        ({"type": "ref/prompt", "name": {"x": 1}}, "language", None),
    ],
    ids=[
        "not-a-prompt-argument",
        "not-a-template-variable",
        "context-not-strings",
        "prompt-name-not-a-string",
    ],
)
async def test_an_argument_that_names_nothing_is_invalid_params(
    ref: dict[str, str], name: str, context: dict[str, Any] | None
) -> None:
    async with McpTestClient(server()) as client:
        with pytest.raises(ProtocolError) as info:
            await ask(client, ref, name, "", context)

    assert -32602 == info.value.code


async def test_completions_are_advertised_only_when_a_declaration_has_complete() -> (
    None
):
    @prompt
    def plain(text: str) -> str:
        """Echo.

        Args:
            text: The text.
        """
        return text

    async with McpTestClient(Server("p", "1", prompts=[plain])) as client:
        discovered = await client.discover()
        with pytest.raises(ProtocolError) as info:
            await ask(client, prompt_ref("plain"), "text", "")

    assert "completions" not in wire(discovered)["capabilities"]
    assert -32601 == info.value.code


secret_files = Capability("secret_files", description="Read secret files")


@prompt(caps=[secret_files], complete={"name": lambda v, c: ["passwords.txt"]})
def secret(name: str) -> str:
    """Quote a secret file.

    Args:
        name: The file.
    """
    return name


async def test_a_completer_runs_only_for_callers_granted_its_declarations_caps() -> (
    None
):
    refused_server = Server("s", "1", prompts=[secret])
    async with McpTestClient(refused_server) as client:
        with pytest.raises(ProtocolError) as info:
            await ask(client, prompt_ref("secret"), "name", "")
    async with McpTestClient(refused_server, allow=[secret_files]) as client:
        granted = await ask(client, prompt_ref("secret"), "name", "")

    assert -31403 == info.value.code
    assert ["passwords.txt"] == granted["values"]


def test_a_complete_key_that_is_not_a_parameter_is_an_invalid_declaration() -> None:
    @prompt(complete={"lang": languages})
    def typo(language: str) -> str:
        """Typo.

        Args:
            language: The language.
        """
        return language

    @resource(uri="t://{a}", complete={"b": languages, "a": "not callable"})  # type: ignore[dict-item]
    def reader(a: str) -> str:
        """Read.

        Args:
            a: A.
        """
        return a

    with pytest.raises(InvalidDeclaration) as info:
        Server("bad", "1", prompts=[typo], resources=[reader])

    problems = "\n".join(info.value.problems)
    assert "complete= names 'lang', which is not an argument" in problems
    assert "'b', which is not a template variable" in problems
    assert "complete['a'] is not callable" in problems


async def forever(value: str, context: dict[str, str]) -> list[str]:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


@prompt(timeout=0.05, complete={"topic": forever})
def slow(topic: str) -> str:
    """A prompt whose completer never answers.

    Args:
        topic: The topic.
    """
    return topic


async def test_a_completer_runs_under_its_declarations_timeout() -> None:
    async with McpTestClient(Server("slow", "1", prompts=[slow])) as client:
        with pytest.raises(ProtocolError) as info:
            await ask(client, prompt_ref("slow"), "topic", "")

    assert -32603 == info.value.code
    assert "timeout" == wire(info.value.data)["kind"]


class MistypedAdopter:
    """A hand-written resource whose spec completes a variable it does not have."""

    def spec(self) -> ResourceSpec:
        return ResourceSpec(
            uri="adopted://{name}",
            name="adopted",
            description="Adopted.",
            complete={"nmae": lambda v, c: []},
        )

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        raise AssertionError("never read")


def test_a_hand_written_spec_with_a_wrong_complete_key_is_refused_too() -> None:
    with pytest.raises(InvalidDeclaration, match="'nmae', which is not a template"):
        Server("adopted", "1", resources=[MistypedAdopter()])
