"""``trio-mcp serve``: a server over Streamable HTTP, on Hypercorn's Trio worker,
alone or as ``--workers N`` processes, with the bounds, rate limit, proxies, OAuth
and Redis the flags describe."""

from __future__ import annotations

import argparse
from typing import Any

import trio

from trio_mcp import Server

from ._auth import add_auth_arguments, bearer_auth
from ._common import add_allow, add_legacy, add_target, summary
from ._load import CliError, open_server
from ._logs import level_from

__all__ = ["serve", "serve_arguments", "serve_http"]


def serve_arguments(parser: argparse.ArgumentParser) -> None:
    add_target(parser)
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1); beyond loopback it "
        "needs --require-auth or --auth-issuer",
    )
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--path",
        default="/mcp",
        help="the MCP endpoint's path (default /mcp); GET /healthz answers beside it",
    )
    add_allow(parser)
    add_legacy(parser)
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


def serve(args: argparse.Namespace) -> int:
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
