"""``trio-mcp proxy TARGET``: serve one upstream through a trio_mcp gateway.

A remote Streamable HTTP server for a stdio-only host (``trio-mcp proxy URL``), a
command's stdio server over HTTP (``trio-mcp proxy --serve-http 127.0.0.1:8000 --
python server.py``), or a handshake-era server for modern clients and the reverse
(``--legacy`` also serves handshake-era clients). The gateway is a ``Server`` whose
only catalog is the upstream's (``Upstream(target, prefix=...)``), so every call
runs through its chain and its logs. A bearer token for the upstream comes from
the environment variable named by ``--auth-env``, never from the command line.
"""

from __future__ import annotations

import argparse

import trio

from .._version import __version__
from ._load import CliError
from ._remote import add_remote_credentials, headers_of, token_of

__all__ = ["proxy", "proxy_arguments"]


def proxy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        help="the upstream: an http(s):// or ws(s):// URL, or a command after '--'",
    )
    parser.add_argument(
        "--prefix", default="", help="put before the upstream's tool and prompt names"
    )
    parser.add_argument(
        "--legacy",
        action="store_true",
        help="also serve handshake-era clients (initialize, sessions)",
    )
    parser.add_argument(
        "--serve-http",
        metavar="HOST:PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    add_remote_credentials(parser, "a URL upstream")


def _bind(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise CliError(f"--serve-http {text!r}: write it as HOST:PORT (127.0.0.1:8000)")
    return host.strip("[]"), int(port)


def proxy(args: argparse.Namespace) -> int:
    from trio_mcp import Server, Upstream

    command: list[str] | None = getattr(args, "stdio_command", None)
    target: str | list[str] | None = command if command else args.target
    if target is None or (command is not None and args.target is not None):
        raise CliError(
            "name one upstream: a URL ('trio-mcp proxy http://host/mcp') or a command "
            "after '--' ('trio-mcp proxy -- python server.py')"
        )
    bind = None if args.serve_http is None else _bind(args.serve_http)
    upstream = Upstream(
        target,
        prefix=args.prefix,
        headers=headers_of(args),
        auth=token_of(args),
    )
    server = Server(
        f"proxy of {upstream.label}",
        __version__,
        upstreams=[upstream],
        legacy=args.legacy,
    )

    async def body() -> None:
        if bind is None:
            await server.serve_stdio()
        else:
            await server.serve_http(bind[0], bind[1])

    trio.run(body)
    return 0
