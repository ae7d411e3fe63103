"""``trio-mcp serve --auth-issuer URL --auth-audience URL --auth-scope SCOPE=CAP``.

Builds the ``trio_mcp.auth.BearerAuth`` the flags describe. A capability is named
as in ``--allow``: it must be one the server's declarations use (their ``caps=``
and what those require), so a typo is an error at start-up, not a scope that grants
nothing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .._authority import Capability
from .._errors import install_hint
from ._load import CliError

if TYPE_CHECKING:
    from trio_mcp import Server
    from trio_mcp.auth import BearerAuth

__all__ = ["add_auth_arguments", "bearer_auth"]


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--auth-*`` options of ``serve``."""
    group = parser.add_argument_group("OAuth resource server (needs the auth extra)")
    group.add_argument(
        "--auth-issuer",
        metavar="URL",
        help="check bearer tokens issued by this authorization server",
    )
    group.add_argument(
        "--auth-audience",
        metavar="URL",
        help="this server's canonical URI; tokens must name it in aud (RFC 8707)",
    )
    group.add_argument(
        "--auth-scope",
        metavar="SCOPE=CAPABILITY",
        action="append",
        default=[],
        help="an OAuth scope grants a capability (repeatable)",
    )
    group.add_argument(
        "--auth-required-scope",
        metavar="SCOPE",
        action="append",
        default=[],
        help="a scope every request needs (repeatable)",
    )
    group.add_argument(
        "--auth-dpop-required",
        action="store_true",
        help="refuse tokens not bound to the client's key (DPoP, RFC 9449)",
    )


def _declared_caps(server: Server) -> dict[str, Capability]:
    found: dict[str, Capability] = {}
    stack = [cap for spec in server.catalog() for cap in spec.caps]
    while stack:
        cap = stack.pop()
        if cap.name not in found:
            found[cap.name] = cap
            stack.extend(cap.requires)
    return found


def _scopes(server: Server, pairs: list[str]) -> dict[str, list[Capability]]:
    declared = _declared_caps(server)
    scopes: dict[str, list[Capability]] = {}
    for pair in pairs:
        scope, sep, name = pair.partition("=")
        if not sep or not scope or not name:
            raise CliError(f"--auth-scope {pair!r}: write SCOPE=CAPABILITY")
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise CliError(
                f"--auth-scope {pair!r}: no declaration uses a capability named "
                f"{name!r} (the server's capabilities: {known})"
            )
        scopes.setdefault(scope, []).append(declared[name])
    return scopes


def bearer_auth(server: Server, args: argparse.Namespace) -> BearerAuth | None:
    """The ``BearerAuth`` of the ``--auth-*`` flags, or None when none is given.

    Raises:
        CliError: if the flags are incomplete or wrong, or the extra is missing.
    """
    given = args.auth_issuer, args.auth_audience
    flags = args.auth_scope or args.auth_required_scope or args.auth_dpop_required
    if given == (None, None) and not flags:
        return None
    if None in given:
        raise CliError("--auth-issuer and --auth-audience go together; give both")
    try:
        from trio_mcp.auth import BearerAuth
    except ImportError as exc:
        raise CliError(
            f"--auth-issuer needs the auth extra ({exc}); {install_hint('auth')}"
        ) from None
    try:
        return BearerAuth(
            args.auth_issuer,
            args.auth_audience,
            scopes=_scopes(server, args.auth_scope),
            required_scopes=args.auth_required_scope,
            dpop="required" if args.auth_dpop_required else "allowed",
        )
    except (ValueError, TypeError) as exc:
        raise CliError(f"--auth-*: {exc}") from None
