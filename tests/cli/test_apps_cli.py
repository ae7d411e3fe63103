"""MCP Apps from the command line: ``trio-mcp check`` lists views; the pinned MCP
Inspector, in its modern era, lists and reads a view's resource (its CLI mode, headless).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import cli

EXAMPLE = Path(__file__).parents[2] / "examples" / "ticket_board.py"
BOARD = "ui://ticket-board/board"
MIME = "text/html;profile=mcp-app"


def test_check_lists_each_tools_view_and_who_may_call_it(tmp_path: Path) -> None:
    done = cli("check", f"{EXAMPLE}:server", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("  tool     show_board: ")
    assert f"           view {BOARD} (model, app)" == lines[2]
    assert lines[3].startswith("  tool     close_ticket: ")
    assert f"           view {BOARD} (app)" == lines[4]
    assert lines[5].startswith(f"  resource {BOARD}: ")


def test_check_json_names_the_view_of_each_tool(tmp_path: Path) -> None:
    done = cli("check", f"{EXAMPLE}:server", "--json", cwd=tmp_path)

    assert 0 == done.returncode, done.stderr
    catalog = json.loads(done.stdout)["catalog"]
    assert [
        ("tool", "show_board", BOARD, ["model", "app"]),
        ("tool", "close_ticket", BOARD, ["app"]),
        ("resource", BOARD, None, None),
    ] == [(i["kind"], i["name"], i.get("view"), i.get("visibility")) for i in catalog]
    assert MIME == catalog[2]["entry"]["mimeType"]


def test_check_names_a_view_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "board_server.py").write_text(
        "from pathlib import Path\n"
        "from trio_mcp import Server, View\n"
        "server = Server('b', '1', resources=[View('ui://b/board', Path('gone.html'))])\n"
    )

    done = cli("check", "board_server.py:server", cwd=tmp_path)

    assert 1 == done.returncode, done.stderr
    assert "View('ui://b/board'): cannot read its HTML from 'gone.html'" in done.stdout


def inspector(tmp_path: Path, *arguments: str) -> str:
    done = cli("dev", f"{EXAMPLE}:server", "--mode", "cli", "--inspector-args",
               *arguments, cwd=tmp_path)  # fmt: skip
    assert 0 == done.returncode, done.stderr
    return done.stdout


def test_the_inspector_reads_the_views_resource(tmp_path: Path) -> None:
    arguments = ("--method", "resources/read", "--uri", BOARD, "--format", "json")

    read = json.loads(inspector(tmp_path, *arguments))

    [contents] = read["result"]["contents"]
    assert (BOARD, MIME) == (contents["uri"], contents["mimeType"])
    assert contents["text"] == (EXAMPLE.with_suffix(".html")).read_text()
    assert {"ui": {"prefersBorder": True}} == contents["_meta"]


def test_the_inspector_finds_each_tools_app(tmp_path: Path) -> None:
    """``--app-info`` lists the tools, reads each one's view and reports what it found."""
    lines = inspector(
        tmp_path, "--method", "tools/list", "--app-info", "--advertise-apps"
    )

    assert [
        {
            "hasApp": True,
            "toolName": "show_board",
            "resourceUri": BOARD,
            "prefersBorder": True,
            "resourceMimeType": MIME,
        },
        {
            "hasApp": True,
            "toolName": "close_ticket",
            "resourceUri": BOARD,
            "visibility": ["app"],
            "prefersBorder": True,
            "resourceMimeType": MIME,
        },
    ] == [json.loads(line) for line in lines.splitlines()]
