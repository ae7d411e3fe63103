"""The commands behind ``trio-mcp``: each one an argument builder and a runner.

Runners return the exit status and raise ``CliError`` (or ``McpError``) for
anything the user must fix; ``main`` turns those into one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import trio

from trio_mcp import DuplicateName, InvalidDeclaration, Server

from .._transports._entry import banner
from ._auth import add_auth_arguments, bearer_auth
from ._load import CliError, LoadError, open_server
from ._logs import level_from

__all__ = ["COMMANDS", "catalog_entries", "summary"]

Runner = Callable[[argparse.Namespace], int]
Command = tuple[str, Callable[[argparse.ArgumentParser], None], Runner]


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        help="module:attr or path/file.py:attr; attr is a Server, a factory or a "
        "lifespan (an async context manager function yielding a Server)",
    )


def _allow(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="NAME",
        help="grant a capability to every caller (repeatable)",
    )


def catalog_entries(server: Server) -> list[tuple[str, str, dict[str, Any]]]:
    """Return ``(kind, name, wire entry)`` for each catalog entry, in order."""
    out = []
    for spec in server.catalog():
        wire: dict[str, Any] = dict(spec.to_wire())
        kind = type(spec).__name__.removesuffix("Spec").lower()
        name = wire.get("name") if kind != "resource" else None
        name = name or wire.get("uri") or wire.get("uriTemplate")
        out.append((kind, str(name), wire))
    return out


def summary(server: Server, where: str, allow: Sequence[str]) -> str:
    """Return the line printed to stderr when a server starts (as ``serve_http``'s)."""
    kinds = [kind for kind, _, _ in catalog_entries(server)]
    return banner(server.name, server.version, kinds, where, list(allow))


# -- run and serve -------------------------------------------------------------------
def _legacy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="also serve handshake-era clients (initialize; revisions 2025-03-26 to "
        "2025-11-25) beside 2026-07-28 ones",
    )


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    _target(parser)
    _allow(parser)
    _legacy(parser)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Keep the protocol stream clean while user code runs outside ``serve_stdio``.

    A lifespan or a module may print (or a C library write to fd 1) while it opens
    or closes; ``serve_stdio`` guards fd 1 only while it serves.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _run(args: argparse.Namespace) -> int:
    async def body() -> None:
        async with contextlib.AsyncExitStack() as stack:
            with _stdout_to_stderr():
                server = await stack.enter_async_context(open_server(args.target))
            if args.legacy:
                server.legacy = True
            print(summary(server, "stdio", args.allow), file=sys.stderr)
            try:
                await server.serve_stdio(allow=tuple(args.allow))
            finally:
                with _stdout_to_stderr(), trio.CancelScope(shield=True):
                    await stack.aclose()

    trio.run(body)
    return 0


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    _target(parser)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--path", default="/mcp")
    _allow(parser)
    _legacy(parser)
    parser.add_argument(
        "--require-auth",
        action="store_true",
        help="refuse requests without an authenticated principal",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="Hypercorn Trio worker processes sharing the port (needs a state key "
        "from TRIO_MCP_STATE_KEY or Server(state_key=...) when N > 1)",
    )
    parser.add_argument(
        "--max-concurrent",
        type=int,
        metavar="N",
        help="most calls running at once per process (default 16)",
    )
    parser.add_argument(
        "--max-waiting",
        type=int,
        metavar="N",
        help="most calls waiting for a slot per process; beyond it 503 (default 64)",
    )
    parser.add_argument(
        "--rate-limit",
        metavar="CALLS/SECONDS",
        help="a token bucket per caller (principal, else client address), "
        "e.g. 120/60; beyond it calls get 429 with Retry-After",
    )
    parser.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy (address or network) whose --forwarded-header names "
        "the client for --rate-limit and the listen bounds (repeatable)",
    )
    parser.add_argument(
        "--forwarded-header",
        choices=("x-forwarded-for", "forwarded"),
        default="x-forwarded-for",
        help="the one header the trusted proxies set to name the client "
        "(default x-forwarded-for); any other is ignored",
    )
    parser.add_argument(
        "--metrics-path",
        metavar="PATH",
        help="serve request metrics in the Prometheus text format at PATH "
        "(e.g. /metrics); needs the metrics extra; keep it off public routes",
    )
    parser.add_argument(
        "--broadcast",
        metavar="URL",
        help="share resource updates and catalog changes through Redis "
        "(redis://host:port/db); needs the redis extra",
    )
    add_auth_arguments(parser)


async def serve_http(server: Server, args: argparse.Namespace, **options: Any) -> None:
    """Serve over HTTP until Ctrl-C or SIGTERM.

    ``serve_http`` prints the banner once bound and, run from ``trio.run`` as here,
    stops gracefully on a signal (``_transports/_entry.py``).
    """
    await server.serve_http(
        args.host, args.port, args.path, allow=tuple(args.allow), **options
    )


def _serve(args: argparse.Namespace) -> int:
    """``trio-mcp serve``: one process in Trio, or Hypercorn's supervisor of N."""
    if args.workers < 1:
        raise CliError("--workers must be at least 1")
    rate_limit = _rate_limit(args)  # a bad flag fails before the target loads
    _proxies(args)
    if args.workers > 1:
        return _serve_workers(args)

    async def body() -> None:
        async with open_server(args.target) as server:
            if args.legacy:
                server.legacy = True
            if args.broadcast is not None:
                server.broadcast = _redis(args.broadcast)
            auth = bearer_auth(server, args)
            options = {} if auth is None else {"auth": auth}
            await serve_http(
                server,
                args,
                require_auth=args.require_auth,
                metrics_path=args.metrics_path,
                rate_limit=rate_limit,
                limits=_limits(args),
                **_proxies(args),
                **options,
            )

    trio.run(body)
    return 0


def _limits(args: argparse.Namespace) -> Any:
    """The ``Limits`` of ``--max-concurrent`` and ``--max-waiting`` (defaults if absent)."""
    from .._limits import Limits

    given = {"max_concurrent": args.max_concurrent, "max_waiting": args.max_waiting}
    return Limits.of(None, {k: v for k, v in given.items() if v is not None})  # type: ignore[arg-type]


def _rate_limit(args: argparse.Namespace) -> Any:
    """The ``RateLimit`` of ``--rate-limit CALLS/SECONDS``, or None."""
    from .._rate_limit import RateLimit

    if args.rate_limit is None:
        return None
    calls, slash, per = args.rate_limit.partition("/")
    try:
        if not slash:
            raise ValueError("write it as CALLS/SECONDS, e.g. 120/60")
        return RateLimit(int(calls), float(per))
    except (ValueError, TypeError) as exc:
        raise CliError(f"--rate-limit {args.rate_limit}: {exc}") from None


def _proxies(args: argparse.Namespace) -> dict[str, Any]:
    """The ``trusted_proxies`` and ``forwarded_header`` options of the flags.

    Raises:
        CliError: for a ``--trusted-proxy`` that is not an address or network.
    """
    from .._http._forwarded import ClientAddresses

    try:
        ClientAddresses(args.trusted_proxy, args.forwarded_header)
    except ValueError as exc:
        raise CliError(f"--trusted-proxy: {exc}") from None
    return {
        "trusted_proxies": tuple(args.trusted_proxy) or None,
        "forwarded_header": args.forwarded_header,
    }


def _redis(url: str) -> Any:
    from .._changes._redis import RedisBroadcast

    try:
        return RedisBroadcast(url)
    except ValueError as exc:
        raise CliError(f"--broadcast: {exc}") from None


def _serve_workers(args: argparse.Namespace) -> int:
    """Hypercorn's own supervisor of ``--workers`` processes, each loading the target."""
    from .._errors import InvalidArgument
    from .._http._hypercorn import bind_socket, check_binding
    from .._http._workers import WorkerSpec, require_shared_sessions, run_workers
    from .._loopback import is_loopback
    from .._protocol._state import StateKeyRequired, require_shared_key
    from .._transports._entry import announce
    from ._load import load_server

    if args.broadcast is not None:
        _redis(args.broadcast)  # a bad URL fails here, not in every worker
    wants_auth = args.auth_issuer is not None
    check_binding(args.host, require_auth=args.require_auth or wants_auth)
    server = load_server(args.target)
    auth = bearer_auth(server, args)  # each worker gets a copy (its own key cache)
    legacy = args.legacy or server.legacy
    try:
        require_shared_key(server.state_key, processes=args.workers)
        require_shared_sessions(
            server._dispatcher.store, legacy=legacy, workers=args.workers
        )
    except (StateKeyRequired, InvalidArgument) as exc:
        raise CliError(str(exc)) from None
    options = {
        "auth": auth,
        "path": args.path,
        "allow": tuple(args.allow),
        "require_auth": args.require_auth,
        "check_host": is_loopback(args.host),
        "metrics_path": args.metrics_path,
        "rate_limit": _rate_limit(args),
        "limits": _limits(args),
        **_proxies(args),
    }
    spec = WorkerSpec(
        args.target,
        options,
        broadcast_url=args.broadcast,
        log_level=level_from(args.log_level),
        legacy=legacy,
    )
    # Bound here, so the start line names the port (0 picks one) and a port in use
    # is the one-line error a single process gives. Hypercorn takes the descriptor
    # over (and closes it).
    sock = bind_socket(args.host, args.port)
    host = f"[{args.host}]" if ":" in args.host else args.host
    where = f"http://{host}:{sock.getsockname()[1]}{args.path}"
    announce(summary(server, f"{where} ({args.workers} workers)", args.allow))
    return run_workers(spec, workers=args.workers, bind=f"fd://{sock.detach()}")


# -- check ---------------------------------------------------------------------------
def _check_arguments(parser: argparse.ArgumentParser) -> None:
    _target(parser)
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
    _target(parser)
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
    _allow(parser)
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for the reply"
    )


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
            result = await client.call_tool(args.tool, arguments)
        except ProtocolError as exc:
            error = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            print(json.dumps({"error": error}, indent=2))
            return 1
    print(json.dumps(result.raw, indent=2, ensure_ascii=False))
    return 1 if result.is_error else 0


async def _read_or_get(
    client: Any, args: argparse.Namespace, arguments: dict[str, Any]
) -> Any:
    """``resources/read`` or ``prompts/get``: the result as the client receives it."""
    if args.resource is not None:
        return await client.read_resource(args.resource)
    return await client.get_prompt(args.prompt, arguments)


def _call(args: argparse.Namespace) -> int:
    named = [args.tool is not None, args.resource is not None, args.prompt is not None]
    if sum(named) != 1:
        raise CliError(
            "name one thing to call: a TOOL, --resource URI or --prompt NAME "
            "(e.g. 'trio-mcp call server.py forecast --args JSON')"
        )
    arguments = _call_arguments_value(args.args)
    return trio.run(_call_tool, args, arguments)


# -- the rest lives in its own module --------------------------------------------------
def _lock_arguments(parser: argparse.ArgumentParser) -> None:
    _target(parser)
    parser.add_argument("--file", default="mcp.lock")
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
    _target(parser)
    parser.add_argument("--name", help="the entry's name (default: the server's name)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable for the server (repeatable)",
    )
    _allow(parser)
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
    _allow(parser)
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
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--path", default="/mcp")
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
            print(summary(server, "stdio", args.allow), file=sys.stderr)
            await server.serve_stdio(allow=tuple(args.allow))

    trio.run(body)
    return 0


COMMANDS: dict[str, Command] = {
    "run": ("serve a server over stdio", _run_arguments, _run),
    "serve": ("serve a server over Streamable HTTP", _serve_arguments, _serve),
    "check": ("validate declarations and print the catalog", _check_arguments, _check),
    "call": (
        "call a tool, read a resource or get a prompt in-process; print the result",
        _call_arguments,
        _call,
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
