"""``trio-mcp run|check|call``: targets, reports and exit statuses, as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import cli, replies, request_line, write_server

from trio_mcp._version import __version__
from trio_mcp.testing import check_message


def test_check_prints_the_catalog(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("check", "echo_server.py:server", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    assert "echo-server 1.0: catalog is valid" in done.stdout
    assert "tool     echo: Echo the text back." in done.stdout


def test_check_accepts_a_module_name_and_each_kind_of_factory(tmp_path: Path) -> None:
    write_server(tmp_path)

    statuses = [
        cli("check", f"echo_server:{attr}", cwd=tmp_path).returncode
        for attr in ("server", "build", "build_later")
    ]

    assert [0, 0, 0] == statuses


def test_check_json_lists_the_catalog_entries(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("check", "echo_server.py", "--json", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    report = json.loads(done.stdout)
    assert {"name": "echo-server", "version": "1.0"} == report["server"]
    assert ["echo", "fail"] == [item["name"] for item in report["catalog"]]
    assert {"text"} == set(report["catalog"][0]["entry"]["inputSchema"]["properties"])
    assert (True, []) == (report["ok"], report["problems"])


def test_check_json_reports_a_stale_args_entry_with_exit_status_1(
    tmp_path: Path,
) -> None:
    path = write_server(tmp_path)
    path.write_text(
        path.read_text().replace(
            "        text: What to echo.\n",
            "        text: What to echo.\n        loud: Shout it.\n",
        )
    )

    done = cli("check", "echo_server.py:server", "--json", cwd=tmp_path)

    assert 1 == done.returncode, done.stderr
    report = json.loads(done.stdout)
    assert False is report["ok"]
    assert 1 == len(report["problems"])
    assert "documents 'loud' under 'Args:'" in report["problems"][0]


def test_check_reports_an_undocumented_parameter_with_exit_status_1(
    tmp_path: Path,
) -> None:
    path = write_server(tmp_path)
    path.write_text(path.read_text().replace("        text: What to echo.\n", ""))

    done = cli("check", "echo_server.py:server", cwd=tmp_path)

    assert 1 == done.returncode
    assert "parameter 'text' has no description" in done.stdout


def test_a_missing_attribute_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("check", "echo_server.py:nope", cwd=tmp_path)

    assert 2 == done.returncode
    assert "has no attribute 'nope'" in done.stderr
    assert "Traceback" not in done.stderr
    assert 1 == len(done.stderr.strip().splitlines())


def test_a_missing_attribute_suggests_the_servers_the_file_defines(
    tmp_path: Path,
) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py:mcp", cwd=tmp_path)

    assert 2 == done.returncode
    assert done.stderr.strip().endswith("did you mean 'echo_server.py:server'?")


def test_messages_name_the_file_not_an_internal_module(tmp_path: Path) -> None:
    """A declaration problem names ``echo_server:echo``, as the author wrote it."""
    write_server(tmp_path, summary="")

    done = cli("check", "echo_server.py", cwd=tmp_path)

    assert 1 == done.returncode
    assert "(echo_server:echo)" in done.stdout
    assert "_trio_mcp_target" not in done.stdout + done.stderr


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    done = cli("--version", cwd=tmp_path)

    assert 0 == done.returncode
    assert f"trio-mcp {__version__}" == done.stdout.strip()


def test_a_target_that_is_not_a_server_says_what_to_name(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("run", "echo_server.py:not_a_server", cwd=tmp_path)

    assert 2 == done.returncode
    assert "is int, not a trio_mcp.Server" in done.stderr


def test_a_module_that_raises_on_import_is_named_and_debug_shows_the_traceback(
    tmp_path: Path,
) -> None:
    (tmp_path / "broken.py").write_text("import os\nraise RuntimeError('no config')\n")

    plain = cli("check", "broken.py:server", cwd=tmp_path)
    debug = cli("check", "broken.py:server", "--debug", cwd=tmp_path)

    assert 2 == plain.returncode
    assert "RuntimeError: no config" in plain.stderr
    assert "broken.py:2" in plain.stderr
    assert "Traceback" not in plain.stderr
    assert 2 == debug.returncode
    assert "Traceback (most recent call last)" in debug.stderr


def test_an_unknown_module_suggests_where_to_run_from(tmp_path: Path) -> None:
    done = cli("check", "no_such_module:server", cwd=tmp_path)

    assert 2 == done.returncode
    assert "no module named 'no_such_module'" in done.stderr


def test_call_prints_the_result_as_json(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli(
        "call", "echo_server.py", "echo", "--args", '{"text": "hi"}', cwd=tmp_path
    )

    assert 0 == done.returncode, done.stderr
    result = json.loads(done.stdout)
    assert "hi" == result["structuredContent"]
    assert False is result["isError"]


def test_call_exits_1_on_an_error_result(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli(
        "call", "echo_server.py", "fail", "--args", '{"reason": "nope"}', cwd=tmp_path
    )

    assert 1 == done.returncode
    result = json.loads(done.stdout)
    assert True is result["isError"]
    assert "nope" in result["content"][0]["text"]


def test_call_exits_1_on_a_protocol_error(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("call", "echo_server.py", "missing", cwd=tmp_path)

    assert 1 == done.returncode
    assert -32602 == json.loads(done.stdout)["error"]["code"]


def test_call_refuses_arguments_that_are_not_a_json_object(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli("call", "echo_server.py", "echo", "--args", "[1]", cwd=tmp_path)

    assert 2 == done.returncode
    assert "--args must be a JSON object" in done.stderr


def test_run_serves_the_target_over_stdio_until_stdin_closes(tmp_path: Path) -> None:
    write_server(tmp_path)

    done = cli(
        "run",
        "echo_server.py:server",
        cwd=tmp_path,
        stdin=request_line(1, "server/discover") + request_line(2, "tools/list"),
    )

    assert 0 == done.returncode, done.stderr
    by_id = replies(done.stdout)
    check_message(by_id[1], "server/discover")
    check_message(by_id[2], "tools/list")
    assert ["echo", "fail"] == [t["name"] for t in by_id[2]["result"]["tools"]]
    assert (
        "trio-mcp: serving echo-server 1.0 over stdio: 2 tools, 0 resources, "
        "0 prompts; granted: nothing; revisions: 2026-07-28"
    ) in done.stderr


LIFESPANS = """
import contextlib
from echo_server import server

@contextlib.asynccontextmanager
async def failing():
    raise ConnectionRefusedError("database is down")
    yield server

@contextlib.asynccontextmanager
async def wrong():
    yield "not a server"

@contextlib.asynccontextmanager
async def fine():
    print("opening", flush=True)
    yield server
    print("closing", flush=True)
"""


def test_a_lifespan_that_fails_before_yielding_is_one_line(tmp_path: Path) -> None:
    write_server(tmp_path)
    (tmp_path / "lifespans.py").write_text(LIFESPANS)

    failing = cli("run", "lifespans.py:failing", cwd=tmp_path)
    wrong = cli("run", "lifespans.py:wrong", cwd=tmp_path)

    assert 2 == failing.returncode
    assert (
        "starting the lifespan 'failing' raised ConnectionRefusedError: database is down"
        in failing.stderr
    )
    assert "Traceback" not in failing.stderr
    assert 2 == wrong.returncode
    assert "what the lifespan 'wrong' yielded is str" in wrong.stderr


def test_a_lifespan_wraps_serving_and_its_prints_stay_off_stdout(
    tmp_path: Path,
) -> None:
    write_server(tmp_path)
    (tmp_path / "lifespans.py").write_text(LIFESPANS)

    done = cli(
        "run", "lifespans.py:fine", cwd=tmp_path, stdin=request_line(1, "tools/list")
    )

    assert 0 == done.returncode, done.stderr
    assert [1] == list(replies(done.stdout))
    assert "opening" in done.stderr
    assert "closing" in done.stderr


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_desk.py"


def test_call_reads_a_resource(tmp_path: Path) -> None:
    done = cli("call", str(EXAMPLE), "--resource", "ticket://T-1", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    result = json.loads(done.stdout)
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "resources/read")
    assert "ticket://T-1" == result["contents"][0]["uri"]
    assert "Refund for a double charge" in result["contents"][0]["text"]


def test_call_gets_a_prompt_with_its_arguments(tmp_path: Path) -> None:
    arguments = json.dumps({"ticket_id": "T-1", "tone": "formal"})

    done = cli("call", str(EXAMPLE), "--prompt", "draft_reply", "--args", arguments,
               cwd=tmp_path)  # fmt: skip

    assert 0 == done.returncode, done.stderr
    result = json.loads(done.stdout)
    check_message({"jsonrpc": "2.0", "id": 1, "result": result}, "prompts/get")
    assert "in a formal tone" in result["messages"][0]["content"]["text"]


def test_call_of_a_missing_resource_prints_the_error_and_exits_1(
    tmp_path: Path,
) -> None:
    done = cli("call", str(EXAMPLE), "--resource", "ticket://nope", cwd=tmp_path)

    assert 1 == done.returncode
    assert -32602 == json.loads(done.stdout)["error"]["code"]


def test_call_needs_exactly_one_thing_to_call(tmp_path: Path) -> None:
    done = cli("call", str(EXAMPLE), cwd=tmp_path)

    assert 2 == done.returncode
    assert (
        "name one thing to call: a TOOL, --resource URI or --prompt NAME" in done.stderr
    )
