"""A server whose tools push one secret value through every path it could escape by.

Used in-process by ``test_canary.py`` and as a stdio subprocess
(``python canary_app.py``; the canary comes from ``TRIO_MCP_CANARY``). Every tool
holds the canary only as a ``Secret``; the handlers reveal it into exception text,
chained causes, log and progress notifications and internal errors, as careless
code would, and the server must mask it everywhere.
"""

from __future__ import annotations

import logging
import os
import uuid

import attrs
import trio

from trio_mcp import (
    Capability,
    Secret,
    Server,
    ToolContext,
    ToolError,
    prompt,
    resource,
    tool,
)

CANARY = os.environ.get("TRIO_MCP_CANARY") or f"canary-{uuid.uuid4().hex}"
DEFAULT_CANARY = f"{CANARY}-default"
MADE_CANARY = f"{CANARY}-made"

vault = Capability("vault", description="Open the vault")
app_log = logging.getLogger("trio_mcp.canary_app")


@attrs.frozen
class Credential:
    user: str
    token: Secret[str]


class VaultError(ToolError):
    """A vault failure the model may read."""


@tool
def holds(token: Secret[str]) -> bool:
    """
    Say whether the token is the canary (proves the handler saw the plaintext).

    Args:
        token: The token.
    """
    return token.reveal().startswith(CANARY)


@tool
def echo_credential(user: str, token: Secret[str]) -> Credential:
    """
    Return the credential, secret included.

    Args:
        user: Who.
        token: The token.
    """
    return Credential(user, token)


@tool
def made_result() -> Credential:
    """Return a credential built during the call."""
    return Credential("made", Secret(MADE_CANARY))


@tool
async def default_error(token: Secret[str] = Secret(DEFAULT_CANARY)) -> int:  # noqa: B008
    """
    Fail quoting the default token.

    Args:
        token: The token.
    """
    raise VaultError(f"default token {token.reveal()} refused")


@tool
def chained_error(token: Secret[str]) -> int:
    """
    Fail quoting the token in the message and in the cause.

    Args:
        token: The token.
    """
    try:
        raise ConnectionError(f"upstream said no to {token.reveal()}")
    except ConnectionError as exc:
        raise VaultError(f"vault refused {token.reveal()}") from exc


@tool
def made_error() -> int:
    """Fail quoting a secret made during the call."""
    raise VaultError(f"made {Secret(MADE_CANARY).reveal()}")


@tool
async def internal_error(token: Secret[str]) -> int:
    """
    Crash quoting the token (the traceback goes to the log).

    Args:
        token: The token.
    """
    raise RuntimeError(f"crash with {token.reveal()}")


@tool
async def notifications(token: Secret[str]) -> int:
    """
    Log and report progress quoting the token.

    Args:
        token: The token.
    """
    ctx = ToolContext.current()
    await ctx.log("warning", f"token is {token.reveal()}")
    await ctx.log("info", {"token": token.reveal()}, logger=token.reveal())
    await ctx.progress(1, 2, message=f"token {token.reveal()}")
    app_log.warning("server-side log of %s", token.reveal())
    return 1


@tool(timeout=0.01)
async def times_out(token: Secret[str]) -> int:
    """
    Hold the token past the deadline.

    Args:
        token: The token.
    """
    await trio.sleep(10)
    return len(token.reveal())  # pragma: no cover


@tool(caps=[vault])
def refused(token: Secret[str]) -> int:
    """
    Need a capability the caller lacks.

    Args:
        token: The token.
    """
    return len(token.reveal())  # pragma: no cover


@tool
def invalid(token: Secret[str], count: int) -> int:
    """
    Take a token and a count (sent wrong on purpose).

    Args:
        token: The token.
        count: A number.
    """
    return count  # pragma: no cover


@prompt
def vault_prompt(topic: str) -> str:
    """
    A prompt that fails quoting a secret made during the call.

    Args:
        topic: What.
    """
    raise RuntimeError(f"prompt {topic} {Secret(MADE_CANARY).reveal()}")


@resource(uri="vault://{key}")
def vault_entry(key: str) -> str:
    """
    A resource whose read fails quoting a secret made during the call.

    Args:
        key: Which entry.
    """
    raise RuntimeError(f"read {key} {Secret(MADE_CANARY).reveal()}")


def make_server(receipts: object = None) -> Server:
    """The canary server."""
    return Server(
        "canary",
        "1",
        tools=[
            holds,
            echo_credential,
            made_result,
            default_error,
            chained_error,
            made_error,
            internal_error,
            notifications,
            times_out,
            refused,
            invalid,
        ],
        prompts=[vault_prompt],
        resources=[vault_entry],
        receipts=receipts,  # type: ignore[arg-type]
    )


#: (tool, arguments) for every path; the canary reaches each only as a Secret.
CALLS: list[tuple[str, dict[str, object]]] = [
    ("holds", {"token": CANARY}),
    ("echo_credential", {"user": "ada", "token": CANARY}),
    ("made_result", {}),
    ("default_error", {}),
    ("chained_error", {"token": CANARY}),
    ("made_error", {}),
    ("internal_error", {"token": CANARY}),
    ("notifications", {"token": CANARY}),
    ("times_out", {"token": CANARY}),
    ("refused", {"token": CANARY}),
    ("invalid", {"token": CANARY, "count": "many"}),
]

if __name__ == "__main__":
    logging.basicConfig(level=logging.DEBUG)
    trio.run(make_server().serve_stdio)
