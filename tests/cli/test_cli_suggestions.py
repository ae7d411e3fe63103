"""The command line helps with typos and explains every flag (issue 45, items 4, 11, 15).

A mistyped command, flag or choice gets the subcommand's usage and a "did you mean";
a tool name the server lacks gets the closest ones; ``--help`` explains every flag;
``call`` shows the progress and log notifications a tool sends at ``--log-level info``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from cli_helpers import cli, write_server
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp._cli import parser
from trio_mcp._cli._logs import notification_line


def commands() -> dict[str, argparse.ArgumentParser]:
    for action in parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no commands")  # pragma: no cover


@pytest.mark.parametrize("command", sorted(commands()))
def test_every_flag_of_every_command_has_help(command: str) -> None:
    missing = [
        action.option_strings or action.dest
        for action in commands()[command]._actions
        if not action.help
    ]

    assert [] == missing


def test_a_mistyped_command_gets_a_did_you_mean(tmp_path: Path) -> None:
    done = cli("serv", "echo_server.py", cwd=tmp_path)

    assert 2 == done.returncode
    assert "invalid choice: 'serv'" in done.stderr
    assert "did you mean 'serve'?" in done.stderr


def test_a_mistyped_flag_gets_the_commands_usage_and_a_did_you_mean(
    tmp_path: Path,
) -> None:
    done = cli("run", "echo_server.py", "--alow", "write", cwd=tmp_path)

    assert 2 == done.returncode
    assert done.stderr.startswith("usage: trio-mcp run "), done.stderr
    assert "trio-mcp run: error: unrecognized arguments: --alow write" in done.stderr
    assert "did you mean --allow?" in done.stderr


def test_a_mistyped_choice_gets_a_did_you_mean(tmp_path: Path) -> None:
    done = cli("run", "--log-level", "inf", "echo_server.py", cwd=tmp_path)

    assert 2 == done.returncode
    assert "did you mean 'info'?" in done.stderr


def test_a_tool_the_server_lacks_gets_the_closest_names(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("call", "echo_server.py", "ecoh", "--args", "{}", cwd=tmp_path)

    assert 1 == done.returncode
    assert "unknown tool 'ecoh'" in done.stdout  # the error, as the client got it
    assert (
        "trio-mcp call: no tool 'ecoh'; did you mean 'echo'? "
        "the server's tools: echo, fail"
    ) in done.stderr


NOTIFYING = '''
from trio_mcp import Server, ToolContext, tool

@tool
async def count(n: int) -> int:
    """Count to n.

    Args:
        n: Where to stop.
    """
    ctx = ToolContext.current()
    for step in range(1, n + 1):
        await ctx.progress(step, total=n, message=f"step {step}")
        await ctx.log("info", {"counted": step})
    return n

server = Server("counter", "1.0", tools=[count])
'''


def test_call_shows_progress_and_logs_on_stderr_at_info(tmp_path: Path) -> None:
    (tmp_path / "counter.py").write_text(NOTIFYING)

    told = cli("call", "counter.py", "count", "--args", '{"n": 2}',
               "--log-level", "info", cwd=tmp_path)  # fmt: skip
    quiet = cli("call", "counter.py", "count", "--args", '{"n": 2}', cwd=tmp_path)

    assert 0 == told.returncode, told.stderr
    lines = told.stderr.splitlines()
    assert "progress 1/2: step 1" in lines
    assert "progress 2/2: step 2" in lines
    assert 'log info: {"counted": 2}' in lines
    assert told.stdout == quiet.stdout  # the result on stdout, as before
    assert "progress" not in quiet.stderr


@given(
    st.one_of(st.none(), st.integers(), st.text()),
    st.one_of(st.none(), st.integers(min_value=0)),
    st.one_of(st.none(), st.text()),
)
def test_any_progress_notification_is_one_line(
    progress: object, total: int | None, message: str | None
) -> None:
    params: dict[str, object] = {"progressToken": "t", "progress": progress}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message.replace("\n", " ")

    line = notification_line({"method": "notifications/progress", "params": params})

    assert line is not None
    assert line.startswith("progress ")
    assert "\n" not in line
