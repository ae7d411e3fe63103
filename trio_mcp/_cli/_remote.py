"""``trio-mcp call`` of a server that is not in this process: a URL, or a command
after ``--`` (``trio-mcp call TOOL --args JSON -- python server.py``).

The call goes through ``trio_mcp.client.Client`` in whichever era the server
speaks; the result (or the JSON-RPC error) is printed as the client received it,
exactly as an in-process ``call`` prints it. A bearer token comes from the
environment variable named by ``--auth-env``, never from the command line, where
``ps`` would show it.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ._load import CliError

__all__ = [
    "add_remote_credentials",
    "headers_of",
    "is_remote",
    "remote_call",
    "token_of",
]


def is_remote(target: str | list[str]) -> bool:
    """Whether ``target`` names a server outside this process."""
    if isinstance(target, list):
        return True
    scheme = target.partition("://")[0].lower()
    return scheme in ("http", "https", "ws", "wss")


def add_remote_credentials(parser: argparse.ArgumentParser, target: str) -> None:
    """``--header`` and ``--auth-env``: what a URL ``target`` is sent."""
    parser.add_argument(
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help=f"send this header to {target} (repeatable)",
    )
    parser.add_argument(
        "--auth-env",
        metavar="VAR",
        help=f"send the bearer token held by this environment variable to {target}",
    )


def headers_of(args: argparse.Namespace) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in args.header or []:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            raise CliError(f"--header {item!r}: write it as 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


def token_of(args: argparse.Namespace) -> str | None:
    if args.auth_env is None:
        return None
    token = os.environ.get(args.auth_env)
    if not token:
        raise CliError(
            f"--auth-env {args.auth_env}: that environment variable is empty or unset"
        )
    return token


async def remote_call(
    args: argparse.Namespace, target: str | list[str], arguments: dict[str, Any]
) -> int:
    """Call the tool (or read, or get) at ``target``; print the result; the status."""
    from trio_mcp import McpError
    from trio_mcp.client import Client

    method, params = _request(args, arguments)
    async with Client(
        target,
        headers=headers_of(args),
        auth=token_of(args),
        timeout=args.timeout,
    ) as client:
        try:
            result = await client.request(method, params)
        except McpError.Remote as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            print(json.dumps({"error": error}, indent=2, ensure_ascii=False))
            return 1
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result.get("isError") is True else 0


def _request(
    args: argparse.Namespace, arguments: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    if args.resource is not None:
        return "resources/read", {"uri": args.resource}
    if args.prompt is not None:
        return "prompts/get", {"name": args.prompt, "arguments": arguments}
    return "tools/call", {"name": args.tool, "arguments": arguments}
