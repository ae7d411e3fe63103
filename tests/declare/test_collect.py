"""Declaration problems: one prefix style, FastMCP's ``description=`` explained, and
every problem of a module collected into one report (issue 45, items 5, 12, 13)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import McpError, Server, prompt, resource, tool
from trio_mcp._declare._collect import collecting_problems

#: ``kind 'name' (module:qualname): what to fix``: how every problem begins.
PREFIX = re.compile(r"^(tool|resource|prompt) '[^']+' \([\w.]+:[\w.<>]+\): \S")


def unannotated(x):  # type: ignore[no-untyped-def]
    """Take anything."""
    return x


def no_docstring(y: int) -> int:
    return y


def text() -> str:
    """Some text."""
    return "text"


def test_description_is_refused_with_where_descriptions_come_from() -> None:
    with pytest.raises(McpError.InvalidDeclaration) as raised:
        tool(description="Add two numbers")(no_docstring)  # type: ignore[call-overload]

    (problem,) = raised.value.problems
    assert PREFIX.match(problem), problem
    assert "@tool takes no description=" in problem
    assert "docstring" in problem
    assert "Args:" in problem


@pytest.mark.parametrize(
    ("decorate", "kind"),
    [
        (lambda: resource("note://x", description="A note"), "resource"),  # type: ignore[call-overload]
        (lambda: prompt(description="A prompt"), "prompt"),  # type: ignore[call-overload]
    ],
)
def test_resources_and_prompts_explain_description_too(
    decorate: object, kind: str
) -> None:
    with pytest.raises(
        McpError.InvalidDeclaration, match=f"@{kind} takes no description="
    ):
        decorate()(text)  # type: ignore[operator]


def test_a_misspelled_option_gets_a_did_you_mean() -> None:
    with pytest.raises(McpError.InvalidDeclaration) as raised:
        tool(nmae="add")(text)  # type: ignore[call-overload]

    assert "@tool has no option nmae=; did you mean name=?" in str(raised.value)


@given(st.sampled_from(["unannotated", "caps", "timeout", "task", "errors", "option"]))
def test_every_decoration_problem_begins_the_same_way(fault: str) -> None:
    make: Callable[[], object] = {
        "unannotated": lambda: tool(unannotated),
        "caps": lambda: tool(caps=["write"])(text),  # type: ignore[list-item]
        "timeout": lambda: tool(timeout=-1)(text),
        "task": lambda: tool(task="always")(text),  # type: ignore[call-overload]
        "errors": lambda: tool(errors=[42])(text),  # type: ignore[list-item]
        "option": lambda: tool(hint=None)(text),  # type: ignore[call-overload]
    }[fault]
    with pytest.raises(McpError.InvalidDeclaration) as raised:
        make()

    for problem in raised.value.problems:
        assert PREFIX.match(problem), problem


def test_collecting_keeps_importing_and_the_server_reports_everything() -> None:
    with collecting_problems() as refused:
        bad_type = tool(unannotated)
        fastmcp = tool(description="Docs")(no_docstring)  # type: ignore[call-overload]
        missing_doc = tool(no_docstring)  # a problem Server(...) finds
        with pytest.raises(McpError.InvalidDeclaration) as raised:
            Server("collected", "1.0", tools=[bad_type, fastmcp, missing_doc])

    problems = raised.value.problems
    assert 5 == len(problems), problems
    assert "parameter 'x' has no type annotation" in problems[0]
    assert "@tool takes no description=" in problems[1]
    # The refused declaration's own docstring problem, in the same report.
    assert "tool 'no_docstring' (" in problems[2]
    assert "has no description" in problems[2]
    assert "has no description" in problems[3]
    assert "parameter 'y' has no description" in problems[4]
    assert all(PREFIX.match(p) for p in problems), problems
    assert list(problems[:3]) == refused
    # The stand-in still calls the function, so the module's own code runs on.
    assert 3 == bad_type(3)


def test_outside_collecting_the_decorator_raises_at_once() -> None:
    with pytest.raises(McpError.InvalidDeclaration, match="no type annotation"):
        tool(unannotated)
