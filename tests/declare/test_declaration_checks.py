"""Declarations are checked when decorated or when the Server is built, never later.

Every failure is ``McpError.InvalidDeclaration`` (or ``DuplicateName``) naming the
declaration and, where there is one, the parameter.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from trio_mcp import (
    DuplicateName,
    InvalidDeclaration,
    McpError,
    Server,
    ToolSpec,
    prompt,
    resource,
    tool,
)


def test_invalid_declaration_and_duplicate_name_are_mcp_errors_under_both_spellings() -> (
    None
):
    """api.md: reachable as attributes of McpError and as module names."""
    assert McpError.InvalidDeclaration is InvalidDeclaration
    assert McpError.DuplicateName is DuplicateName
    assert issubclass(InvalidDeclaration, McpError)
    assert issubclass(DuplicateName, McpError)


def test_a_tool_without_a_docstring_is_refused_by_the_server() -> None:
    """api.md: missing description."""

    @tool
    def shout() -> str:
        return "HEY"

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", tools=[shout])

    assert "tool 'shout'" in str(info.value)
    assert "has no description" in str(info.value)


def test_a_parameter_missing_from_args_is_refused_naming_it() -> None:
    """api.md: undocumented input."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: The first.
        """
        return a + b

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", tools=[add])

    assert "parameter 'b' has no description" in str(info.value)
    assert "parameter 'a'" not in str(info.value)


def test_a_bytes_parameter_fails_when_decorated_naming_the_parameter() -> None:
    """api.md: bytes is outside the type table."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def upload(data: bytes) -> None:
            """Upload.

            Args:
                data: The data.
            """

    assert "parameter 'data'" in str(info.value)
    assert "upload" in str(info.value)


def test_an_unannotated_parameter_fails_when_decorated() -> None:
    """api.md: an untyped parameter fails when the decorator runs."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def echo(text) -> str:  # type: ignore[no-untyped-def]
            """Echo.

            Args:
                text: The text.
            """
            return str(text)

    assert "parameter 'text' has no type annotation" in str(info.value)


def test_an_any_parameter_fails_when_decorated() -> None:
    """api.md: Any is outside the type table."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def echo(text: Any) -> str:
            """Echo.

            Args:
                text: The text.
            """
            return str(text)

    assert "parameter 'text'" in str(info.value)


class _Opaque:
    """Neither attrs nor anything else the type table knows."""


def test_an_arbitrary_class_parameter_fails_when_decorated() -> None:
    """api.md: an arbitrary class is outside the type table."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def take(thing: _Opaque) -> None:
            """Take.

            Args:
                thing: The thing.
            """

    assert "parameter 'thing'" in str(info.value)


def test_a_tool_without_a_return_annotation_fails_when_decorated() -> None:
    """Our choice: the return type decides the reply, so it must be written."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def act(n: int):  # type: ignore[no-untyped-def]
            """Act.

            Args:
                n: How often.
            """

    assert "return type is not annotated" in str(info.value)


def test_star_args_fail_when_decorated() -> None:
    """Our choice: inputs are named, so *args cannot be described by a schema."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def total(*numbers: int) -> int:
            """Add numbers.

            Args:
                numbers: The numbers.
            """
            return sum(numbers)

    assert "parameter 'numbers' is *args/**kwargs" in str(info.value)


def test_star_star_kwargs_fail_when_decorated() -> None:
    """Our choice: inputs are named, so **kwargs cannot be described by a schema."""
    with pytest.raises(InvalidDeclaration) as info:

        @tool
        def options(**extra: int) -> int:
            """Count options.

            Args:
                extra: The options.
            """
            return len(extra)

    assert "parameter 'extra'" in str(info.value)


def test_a_template_variable_without_a_parameter_is_refused_by_the_server() -> None:
    """api.md: every template variable must be a parameter."""

    @resource("files://{folder}/{name}")
    def read_file(folder: str) -> str:
        """A file."""
        return folder

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", resources=[read_file])

    assert "'{name}' has no parameter" in str(info.value)


@pytest.mark.parametrize("annotation", [int, bool, "list[str]", "str | int"])
def test_a_prompt_parameter_that_is_not_a_string_is_refused(annotation: object) -> None:
    """api.md: prompt parameters are str or str | None."""

    def greet(who):  # type: ignore[no-untyped-def]
        """Greet someone.

        Args:
            who: Whom to greet.
        """
        return f"hello {who}"

    greet.__annotations__ = {"who": annotation, "return": str}
    declared = prompt(greet)

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", prompts=[declared])

    assert "parameter 'who' must be 'str' or 'str | None'" in str(info.value)


def test_prompt_parameters_may_be_str_or_optional_str() -> None:
    """api.md: both forms are allowed; the optional one is not required."""

    @prompt
    def greet(who: str, mood: str | None = None) -> str:
        """Greet someone.

        Args:
            who: Whom to greet.
            mood: How.
        """
        return f"hello {who} {mood}"

    server = Server("s", "1", prompts=[greet])

    assert [("who", True), ("mood", False)] == [
        (a.name, a.required)
        for a in server.catalog()[0].arguments  # type: ignore[union-attr]
    ]


class _Shelf:
    @tool
    def count(self, colour: str) -> int:
        """Count the books of one colour.

        Args:
            colour: The colour.
        """
        return len(colour)


def test_an_unbound_method_in_the_list_is_refused_naming_the_fix() -> None:
    """Our choice: the function alone has no instance to call it on."""
    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", tools=[_Shelf.count])

    assert "is a method; list the bound method" in str(info.value)


def test_something_undecorated_in_the_list_is_refused() -> None:
    """Our choice: importing registers nothing, so a plain function is a mistake."""

    def plain() -> None:
        """Plain."""

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", tools=[plain])  # type: ignore[list-item]

    assert "decorate it with @tool" in str(info.value)


def test_the_server_reports_every_problem_of_every_declaration_at_once() -> None:
    """style.md §6: report everything at once."""

    @tool
    def first(x: int) -> int:
        return x

    @tool
    def second(y: int) -> int:
        """Second."""
        return y

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", tools=[first, second])

    text = str(info.value)
    assert 3 == len(info.value.problems)
    assert "tool 'first'" in text
    assert "tool 'second'" in text


def test_two_tools_with_one_name_are_a_duplicate_name() -> None:
    """api.md: DuplicateName, naming both declarations."""

    @tool
    def lookup() -> str:
        """Look up."""
        return ""

    @tool(name="lookup")
    def other() -> str:
        """Look up differently."""
        return ""

    with pytest.raises(DuplicateName) as info:
        Server("s", "1", tools=[lookup, other])

    assert "tool name 'lookup'" in str(info.value)
    assert "other" in str(info.value)


def test_two_prompts_with_one_name_are_a_duplicate_name() -> None:
    """api.md: DuplicateName for prompts."""

    @prompt
    def hello() -> str:
        """Say hello."""
        return "hello"

    @prompt(name="hello")
    def hi() -> str:
        """Say hi."""
        return "hi"

    with pytest.raises(DuplicateName) as info:
        Server("s", "1", prompts=[hello, hi])

    assert "prompt name 'hello'" in str(info.value)


def test_two_resources_with_one_uri_are_a_duplicate_name() -> None:
    """api.md: DuplicateName for resource URIs."""

    @resource("notes://today")
    def today() -> str:
        """Today's notes."""
        return ""

    @resource("notes://today")
    def also_today() -> str:
        """Today's notes again."""
        return ""

    with pytest.raises(DuplicateName) as info:
        Server("s", "1", resources=[today, also_today])

    assert "resource URI 'notes://today'" in str(info.value)
    assert "give one of them another URI" in str(info.value)


def test_a_tool_and_a_prompt_may_share_a_name() -> None:
    """Our choice: names are unique per kind, as the protocol's lists are."""

    @tool
    def summary() -> str:
        """Summarise."""
        return ""

    @prompt(name="summary")
    def summary_prompt() -> str:
        """Ask for a summary."""
        return ""

    server = Server("s", "1", tools=[summary], prompts=[summary_prompt])

    assert ["summary", "summary"] == [s.name for s in server.catalog()]


def test_an_invalid_tool_name_is_refused() -> None:
    """mcp §6.2: names SHOULD be 1-128 of [A-Za-z0-9_.-]; we enforce it."""

    @tool(name="has space")
    def spaced() -> str:
        """Spaced."""
        return ""

    with pytest.raises(InvalidDeclaration) as info:
        Server("s", "1", tools=[spaced])

    assert "the name must be" in str(info.value)


@pytest.mark.parametrize(
    "timeout", [float("nan"), float("inf"), -float("inf"), -1, 10**400, "5"]
)
@pytest.mark.parametrize("decorator", [tool, prompt])
def test_a_timeout_that_is_not_finite_seconds_is_refused_when_decorated(
    timeout: object, decorator: Any
) -> None:
    """Issue 24 class 7: timeout=nan broke every call; now it is refused at once."""

    def wait() -> str:
        """Wait."""
        return "done"

    with pytest.raises(InvalidDeclaration) as info:
        decorator(timeout=timeout)(wait)

    assert ": timeout must" in str(info.value)
    assert "or None for no limit" in str(info.value)


@pytest.mark.parametrize("ttl", [float("nan"), float("inf"), -5])
def test_a_resource_ttl_that_is_not_finite_seconds_is_refused(ttl: float) -> None:
    with pytest.raises(InvalidDeclaration, match="ttl must"):

        @resource("note://x", ttl=ttl, timeout=datetime.timedelta(seconds=1))
        def note() -> str:
            """A note."""
            return "x"


def test_an_adopters_spec_refuses_a_timeout_that_is_not_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        ToolSpec("t", "A tool.", {"type": "object"}, timeout=float("nan"))
