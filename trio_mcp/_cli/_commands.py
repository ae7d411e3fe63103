"""The commands behind ``trio-mcp``: each one an argument builder and a runner.

Runners return the exit status and raise ``CliError`` (or ``McpError``) for
anything the user must fix; ``main`` turns those into one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import sys
from collections.abc import Callable
from typing import Any

import trio

from trio_mcp import DuplicateName, InvalidDeclaration, Server

from ._common import (
    add_allow,
    add_legacy,
    add_target,
    catalog_entries,
    stdout_to_stderr,
    summary,
)
from ._load import CliError, LoadError, open_server
from ._logs import LEVELS, level_from, notification_line
from ._proxy import proxy, proxy_arguments
from ._remote import add_remote_credentials
from ._serve import serve, serve_arguments, serve_http

__all__ = ["COMMANDS", "catalog_entries", "summary"]  # the last two: _common's

Runner = Callable[[argparse.Namespace], int]
Command = tuple[str, Callable[[argparse.ArgumentParser], None], Runner]


# -- run and serve -------------------------------------------------------------------
def _run_arguments(parser: argparse.ArgumentParser) -> None:
    add_target(parser)
    add_allow(parser)
    add_legacy(parser)


def _run(args: argparse.Namespace) -> int:
    async def body() -> None:
        async with contextlib.AsyncExitStack() as stack:
            with stdout_to_stderr():
                server = await stack.enter_async_context(open_server(args.target))
            if args.legacy:
                server.legacy = True
            try:  # serve_stdio prints the start line
                await server.serve_stdio(allow=tuple(args.allow))
            finally:
                with stdout_to_stderr(), trio.CancelScope(shield=True):
                    await stack.aclose()

    trio.run(body)
    return 0


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    add_target(parser)
    parser.add_argument(
        "--json", action="store_true", help="print the report as one JSON object"
    )


def _declaration_problems(exc: LoadError) -> list[str] | None:
    """The declaration problems behind a load failure, or None for other failures."""
    cause = exc.__cause__
    if isinstance(cause, InvalidDeclaration):
        return list(cause.problems)
    if isinstance(cause, DuplicateName):
        return [str(cause)]
    return None


async def _check_report(target: str) -> dict[str, Any]:
    try:
        async with open_server(target) as server:
            entries = catalog_entries(server)
            return {
                "ok": True,
                "server": {"name": server.name, "version": server.version},
                "catalog": [
                    {"kind": kind, "name": name, "entry": wire, **_view_of(wire)}
                    for kind, name, wire in entries
                ],
                "problems": [],
            }
    except LoadError as exc:
        problems = _declaration_problems(exc)
        if problems is None:
            raise
        return {"ok": False, "server": None, "catalog": [], "problems": problems}


def _view_of(entry: dict[str, Any]) -> dict[str, Any]:
    """A tool's MCP Apps view and who may call the tool, when it has a view."""
    ui = entry.get("_meta", {}).get("ui", {})
    if "resourceUri" not in ui:
        return {}
    return {
        "view": ui["resourceUri"],
        "visibility": ui.get("visibility", ["model", "app"]),
    }


def _check(args: argparse.Namespace) -> int:
    report = trio.run(_check_report, args.target)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    elif report["ok"]:
        server = report["server"]
        print(f"{server['name']} {server['version']}: catalog is valid")
        for item in report["catalog"]:
            description = item["entry"].get("description", "")
            print(f"  {item['kind']:8} {item['name']}: {description}")
            if "view" in item:
                print(f"  {'':8} view {item['view']} ({', '.join(item['visibility'])})")
    else:
        count = len(report["problems"])
        print(f"{args.target}: {count} problem{'' if count == 1 else 's'}:")
        for problem in report["problems"]:
            print(f"  - {problem}")
    return 0 if report["ok"] else 1


# -- call ----------------------------------------------------------------------------
def _call_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        help="module:attr or path/file.py:attr (in process), an http(s):// or ws(s):// "
        "URL; or, with a command after '--', the TOOL",
    )
    parser.add_argument(
        "tool", nargs="?", help="the tool's wire name (or --resource / --prompt)"
    )
    other = parser.add_mutually_exclusive_group()
    other.add_argument("--resource", metavar="URI", help="read this resource instead")
    other.add_argument(
        "--prompt",
        metavar="NAME",
        help="get this prompt instead (--args: its arguments)",
    )
    parser.add_argument(
        "--args",
        default="{}",
        metavar="JSON",
        help="the arguments as a JSON object (default: {})",
    )
    add_allow(parser)
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for the reply"
    )
    add_remote_credentials(parser, "a URL target")


def _call_arguments_value(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"--args is not JSON ({exc}); pass an object such as "
            '\'{"query": "refund"}\''
        ) from None
    if not isinstance(value, dict):
        raise CliError('--args must be a JSON object, such as \'{"query": "refund"}\'')
    return value


async def _call_tool(args: argparse.Namespace, arguments: dict[str, Any]) -> int:
    from trio_mcp.testing import McpTestClient, ProtocolError

    async with (
        open_server(args.target) as server,
        McpTestClient(server, allow=tuple(args.allow), timeout=args.timeout) as client,
    ):
        try:
            if args.resource is not None or args.prompt is not None:
                print(json.dumps(await _read_or_get(client, args, arguments), indent=2,
                                 ensure_ascii=False))  # fmt: skip
                return 0
            result = await client.call_tool(args.tool, arguments, **_told(args))
            for message in result.notifications:
                _show(message)
        except ProtocolError as exc:
            error = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            print(json.dumps({"error": error}, indent=2))
            _suggest_name(server, args)
            return 1
    print(json.dumps(result.raw, indent=2, ensure_ascii=False))
    return 1 if result.is_error else 0


def _suggest_name(server: Server, args: argparse.Namespace) -> None:
    """On stderr, the catalog names closest to a tool or prompt name it lacks."""
    kind, asked = ("prompt", args.prompt) if args.prompt else ("tool", args.tool)
    if asked is None:
        return
    names = [name for k, name, _ in catalog_entries(server) if k == kind]
    if asked in names:
        return  # the error was about something else
    close = difflib.get_close_matches(asked, names, n=3)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    listed = ", ".join(names) or "none"
    print(
        f"trio-mcp call: no {kind} {asked!r}; {hint}the server's {kind}s: {listed}",
        file=sys.stderr,
    )


def _told(args: argparse.Namespace) -> dict[str, Any]:
    """Ask for progress and logs when the log level shows them (info, debug)."""
    level = level_from(args.log_level)
    if LEVELS.index(level) > LEVELS.index("info"):
        return {}
    return {"progress_token": "trio-mcp-call", "log_level": level}


def _show(message: dict[str, Any]) -> None:
    line = notification_line(message)
    if line is not None:
        print(line, file=sys.stderr, flush=True)


async def _read_or_get(
    client: Any, args: argparse.Namespace, arguments: dict[str, Any]
) -> Any:
    """``resources/read`` or ``prompts/get``: the result as the client receives it."""
    if args.resource is not None:
        return await client.read_resource(args.resource)
    return await client.get_prompt(args.prompt, arguments)


def _call(args: argparse.Namespace) -> int:
    from ._remote import is_remote, remote_call

    command: list[str] | None = getattr(args, "stdio_command", None)
    if command is not None:
        if not command:
            raise CliError("after '--' give the command that starts the server")
        if args.tool is not None:
            raise CliError(
                "with a command after '--', name the TOOL before it: "
                "'trio-mcp call TOOL --args JSON -- python server.py'"
            )
        args.tool, args.target = args.target, command
    elif args.target is None:
        raise CliError(
            "name the server: module:attr, path/file.py:attr, a URL, or a command "
            "after '--'"
        )
    named = [args.tool is not None, args.resource is not None, args.prompt is not None]
    if sum(named) != 1:
        raise CliError(
            "name one thing to call: a TOOL, --resource URI or --prompt NAME "
            "(e.g. 'trio-mcp call server.py forecast --args JSON')"
        )
    arguments = _call_arguments_value(args.args)
    if is_remote(args.target):
        return trio.run(remote_call, args, args.target, arguments)
    return trio.run(_call_tool, args, arguments)


# -- the rest lives in its own module --------------------------------------------------
def _lock_arguments(parser: argparse.ArgumentParser) -> None:
    add_target(parser)
    parser.add_argument(
        "--file",
        default="mcp.lock",
        help="the lock file to write or compare with (default mcp.lock)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="fail if the catalog differs from the lock file, naming what changed",
    )


def _lock(args: argparse.Namespace) -> int:
    from ._lock import run_lock

    return run_lock(args.target, args.file, check=args.check)


def _install_arguments(parser: argparse.ArgumentParser) -> None:
    from ._hosts import HOSTS

    parser.add_argument("host", choices=sorted(HOSTS), help="the MCP host to configure")
    add_target(parser)
    parser.add_argument("--name", help="the entry's name (default: the server's name)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable for the server (repeatable)",
    )
    add_allow(parser)
    parser.add_argument(
        "--config", help="the host's configuration file (default: its usual place)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing entry of the same name (refused otherwise)",
    )
    parser.add_argument(
        "--modern-only",
        action="store_true",
        help="launch the server without --legacy: only 2026-07-28 clients connect "
        "(by default handshake-era hosts can connect too)",
    )


def _install(args: argparse.Namespace) -> int:
    from ._hosts import install

    return install(args)


def _dev_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        help="module:attr or path/file.py:attr, as for run (omit with --install-only)",
    )
    add_allow(parser)
    parser.add_argument(
        "--mode",
        choices=("web", "cli", "tui"),
        default="web",
        help="the Inspector's web page (default), its command line or its terminal UI",
    )
    parser.add_argument(
        "--install-only",
        action="store_true",
        help="install the pinned Inspector (once) and exit",
    )
    parser.add_argument(
        "--inspector-args",
        nargs=argparse.REMAINDER,
        default=[],
        metavar="ARG",
        help="pass everything after this to the Inspector, e.g. "
        "'--mode cli --inspector-args --method tools/list'",
    )


def _dev(args: argparse.Namespace) -> int:
    from ._dev import Launch, prepare, run_inspector

    if args.install_only:
        node, launcher = prepare()
        print(f"MCP Inspector ready: {launcher} (Node {node.path})", file=sys.stderr)
        return 0
    if args.target is None:
        raise CliError("name the server: trio-mcp dev path/file.py:server")
    launch = Launch(args.target, args.allow, args.mode, args.inspector_args)
    return run_inspector(launch)


def _mcp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--http", action="store_true", help="serve Streamable HTTP instead of stdio"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --http: the address to listen on (default 127.0.0.1)",
    )
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--path",
        default="/mcp",
        help="with --http: the MCP endpoint's path (default /mcp)",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="NAME",
        help="grant a capability; the tools that import code need 'load_code'",
    )
    parser.add_argument(
        "--skills",
        metavar="FOLDER",
        help="also serve the agent skills in FOLDER (one subfolder per skill, "
        "each with a SKILL.md), such as a project's skills/",
    )


def _mcp(args: argparse.Namespace) -> int:
    from ._toolchain import toolchain_server

    server = toolchain_server(skills=args.skills)

    async def body() -> None:
        if args.http:
            await serve_http(server, args)
        else:
            await server.serve_stdio(allow=tuple(args.allow))

    trio.run(body)
    return 0


COMMANDS: dict[str, Command] = {
    "run": ("serve a server over stdio", _run_arguments, _run),
    "serve": ("serve a server over Streamable HTTP", serve_arguments, serve),
    "check": ("validate declarations and print the catalog", _check_arguments, _check),
    "call": (
        "call a tool, read a resource or get a prompt (in process, at a URL, or of "
        "a command after '--'); print the result",
        _call_arguments,
        _call,
    ),
    "proxy": (
        "serve one upstream (a URL, or a command after '--') over stdio or HTTP",
        proxy_arguments,
        proxy,
    ),
    "lock": ("write mcp.lock, or check it with --check", _lock_arguments, _lock),
    "install": (
        "add the server to an MCP host's configuration",
        _install_arguments,
        _install,
    ),
    "dev": (
        "run the pinned MCP Inspector 2.x on the server",
        _dev_arguments,
        _dev,
    ),
    "mcp": ("serve the trio-mcp toolchain as an MCP server", _mcp_arguments, _mcp),
}
