"""``trio-mcp check`` reports every problem of a module in one run (issue 45, item 5).

The decorators raise at the first bad declaration when Python imports the module;
the command line loads it with their problems collected, so a user fixes them all
after one run instead of one per run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_helpers import cli, run_command

BAD = '''
from trio_mcp import Server, prompt, resource, tool

@tool
def untyped(x) -> str:
    """Take anything."""
    return ""

@tool(description="A FastMCP habit")
def described(y: int) -> str:
    return ""

@resource("file:///{name}")
def readme() -> str:
    """The readme."""
    return ""

@prompt
def triage(count: int) -> str:
    """Triage tickets.

    Args:
        count: How many.
    """
    return ""

@tool
def undocumented(z: int) -> str:
    return ""

@tool
def unlisted(w) -> str:
    """Never given to the Server."""
    return ""

server = Server(
    "bad", "1.0",
    tools=[untyped, described, undocumented],
    resources=[readme],
    prompts=[triage],
)
'''


def test_check_lists_every_problem_of_the_module_at_once(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(BAD)

    done = cli("check", "bad.py", cwd=tmp_path)

    assert 1 == done.returncode, done.stderr
    lines = done.stdout.splitlines()
    assert "bad.py: 8 problems:" == lines[0]
    listed = "\n".join(lines[1:])
    for expected in (
        "tool 'untyped' (bad:untyped): parameter 'x' has no type annotation",
        "tool 'described' (bad:described): @tool takes no description=",
        # Refused at decoration, and its docstring problem is in the same run.
        "tool 'described' (bad:described): has no description",
        "tool 'undocumented' (bad:undocumented): has no description",
        "tool 'undocumented' (bad:undocumented): parameter 'z' has no description",
        "resource 'file:///{name}' (bad:readme): URI template variable '{name}'",
        "prompt 'triage' (bad:triage): parameter 'count' must be 'str'",
        "tool 'unlisted' (bad:unlisted): parameter 'w' has no type annotation",
    ):
        assert expected in listed, listed
    assert "Traceback" not in done.stdout + done.stderr


def test_the_json_report_holds_the_same_problems(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(BAD)

    done = cli("check", "bad.py", "--json", cwd=tmp_path)

    assert 1 == done.returncode, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert 8 == len(report["problems"])


def test_python_itself_still_stops_at_the_first_bad_decorator(tmp_path: Path) -> None:
    """The decorators' contract: an unsupported parameter fails at decoration."""
    (tmp_path / "bad.py").write_text(BAD)

    done = cli("run", "bad.py", cwd=tmp_path)  # the CLI collects: all eight
    assert 2 == done.returncode
    assert "8 problems" in done.stderr

    plain = run_command([sys.executable, "bad.py"], cwd=tmp_path)
    assert 1 == plain.returncode
    assert "InvalidDeclaration: tool 'untyped' (__main__:untyped)" in plain.stderr
    assert "described" not in plain.stderr
