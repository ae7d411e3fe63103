"""``trio-mcp``: run, serve, check and lock servers from the command line.

``trio-mcp run module:server`` serves stdio, ``serve`` serves HTTP, ``check``
validates and prints the catalog, ``lock`` writes or checks ``mcp.lock``, ``mcp``
serves the toolchain itself over stdio.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import trio

from .._dispatch._redis import RedisBroadcast
from .._errors import McpError
from .._protocol._state import StateKeyRequired, require_shared_key
from ._load import LoadError, load_server
from ._lock import compare, lock_data

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trio-mcp", description="Run and check trio_mcp servers."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="serve a server over stdio")
    run.add_argument("target", help="package.module:server or path/file.py:server")
    run.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="NAME",
        help="grant a capability (repeatable)",
    )

    serve = sub.add_parser("serve", help="serve a server over Streamable HTTP")
    serve.add_argument("target")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--path", default="/mcp")
    serve.add_argument("--allow", action="append", default=[], metavar="NAME")
    serve.add_argument(
        "--require-auth",
        action="store_true",
        help="refuse requests without an authenticated principal",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="Hypercorn Trio worker processes sharing the port (needs a state key "
        "from TRIO_MCP_STATE_KEY or Server(state_key=...) when N > 1)",
    )
    serve.add_argument(
        "--broadcast",
        metavar="URL",
        help="share resource updates and catalog changes through Redis "
        "(redis://host:port/db); needs the redis extra",
    )

    check = sub.add_parser("check", help="validate declarations and print the catalog")
    check.add_argument("target")

    lock = sub.add_parser("lock", help="write mcp.lock, or check it with --check")
    lock.add_argument("target")
    lock.add_argument("--file", default="mcp.lock")
    lock.add_argument(
        "--check",
        action="store_true",
        help="fail if the catalog differs from the lock file",
    )

    sub.add_parser("mcp", help="serve the trio-mcp toolchain as an MCP server (stdio)")
    return parser


def _print_catalog(target: str) -> None:
    server = load_server(target)
    print(f"{server.name} {server.version}: catalog is valid")
    for spec in server.catalog():
        wire = spec.to_wire()
        kind = type(spec).__name__.removesuffix("Spec").lower()
        name = (
            wire.get("name")
            if kind != "resource"
            else wire.get("uri", wire.get("uriTemplate"))
        )
        print(f"  {kind:8} {name}: {wire.get('description', '')}")


def _lock(target: str, file: str, check: bool) -> int:
    data = lock_data(load_server(target))
    path = Path(file)
    if not check:
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(f"wrote {path}")
        return 0
    if not path.is_file():
        print(
            f"no lock file at {path}; run 'trio-mcp lock {target}' first",
            file=sys.stderr,
        )
        return 1
    changes = compare(json.loads(path.read_text()), data)
    for line in changes:
        print(line, file=sys.stderr)
    if changes:
        print(
            f"{path} is out of date; review the changes and run "
            f"'trio-mcp lock {target}'",
            file=sys.stderr,
        )
        return 1
    print(f"{path} matches the catalog")
    return 0


def _serve(args: argparse.Namespace) -> int:
    """``trio-mcp serve``: one process in Trio, or Hypercorn's supervisor of N."""
    if args.workers < 1:
        print("trio-mcp: --workers must be at least 1", file=sys.stderr)
        return 2
    server = load_server(args.target)
    if args.broadcast is not None:
        try:
            server.broadcast = RedisBroadcast(args.broadcast)
        except ValueError as exc:
            print(f"trio-mcp: --broadcast: {exc}", file=sys.stderr)
            return 2
    if args.workers == 1:
        trio.run(
            partial(
                server.serve_http,
                host=args.host,
                port=args.port,
                path=args.path,
                allow=tuple(args.allow),
                require_auth=args.require_auth,
            )
        )
        return 0
    from .._transports._hypercorn import check_binding, is_loopback
    from .._transports._workers import WorkerSpec, run_workers

    check_binding(args.host, require_auth=args.require_auth)
    require_shared_key(server.state_key, processes=args.workers)
    options = {
        "path": args.path,
        "allow": tuple(args.allow),
        "require_auth": args.require_auth,
        "check_host": is_loopback(args.host),
    }
    spec = WorkerSpec(args.target, options, broadcast_url=args.broadcast)
    return run_workers(spec, workers=args.workers, bind=_bind_address(args))


def _bind_address(args: argparse.Namespace) -> str:
    host = args.host
    return f"[{host}]:{args.port}" if ":" in host else f"{host}:{args.port}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            server = load_server(args.target)
            trio.run(partial(server.serve_stdio, allow=tuple(args.allow)))
        elif args.command == "serve":
            return _serve(args)
        elif args.command == "check":
            _print_catalog(args.target)
        elif args.command == "lock":
            return _lock(args.target, args.file, args.check)
        elif args.command == "mcp":
            from ._toolchain import toolchain_server

            trio.run(toolchain_server().serve_stdio)
    except (LoadError, McpError, StateKeyRequired) as exc:
        print(f"trio-mcp: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
