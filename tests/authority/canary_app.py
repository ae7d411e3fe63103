"""A server whose tools push one secret value through every path it could escape by.

Used in-process by ``test_canary.py`` and as a stdio subprocess
(``python canary_app.py``; the canary comes from ``TRIO_MCP_CANARY``). Every tool
holds the canary only as a ``Secret``; the handlers reveal it into exception text,
chained causes, log and progress notifications, internal errors, the app's own
logger, the root logger, a third-party logger that does not propagate and writes to
stderr itself, and a plain thread's log, as careless code would, and the server must
mask it everywhere. ``ENV_TOKEN`` is a process-wide ``Secret`` loaded at import, as
from the environment; it is masked outside any call too.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import uuid

import attrs
import trio

from trio_mcp import (
    Capability,
    Elicit,
    ElicitResult,
    NeedsInput,
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

ENV_CANARY = f"{CANARY}-env"
#: A process-wide secret, loaded at import as a real app loads its API key.
ENV_TOKEN: Secret[str] = Secret(os.environ.get("TRIO_MCP_CANARY_ENV", ENV_CANARY))

vault = Capability("vault", description="Open the vault")
#: The app's own logger (not under ``trio_mcp``).
app_log = logging.getLogger("canary_app")
#: A third-party library's logger: it does not propagate and has its own stderr
#: handler, so only redaction at record creation can reach it.
vendor_log = logging.getLogger("vendor_sdk.client")
vendor_log.propagate = False
vendor_log.setLevel(logging.DEBUG)
vendor_log.addHandler(logging.StreamHandler(sys.stderr))


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


@tool
async def every_logger(token: Secret[str]) -> int:
    """
    Log the token and the process-wide token through every kind of logger.

    Args:
        token: The token.
    """
    app_log.warning("app logger: %s and %s", token.reveal(), ENV_TOKEN.reveal())
    logging.warning("root logger: %s", token.reveal())
    logging.getLogger().error("root logger, env: %s", ENV_TOKEN.reveal())
    vendor_log.info("GET /v1?key=%s&env=%s", token.reveal(), ENV_TOKEN.reveal())
    try:
        raise ValueError(f"vendor failed for {ENV_TOKEN.reveal()}")
    except ValueError:
        vendor_log.exception("vendor traceback")
    ctx = ToolContext.current()
    await ctx.log("info", f"env token is {ENV_TOKEN.reveal()}")
    await ctx.progress(1, 2, message=f"env {ENV_TOKEN.reveal()}")
    return 1


@tool
def worker_threads(token: Secret[str]) -> int:
    """
    Log the token from the call's worker thread and from a thread it starts.

    Args:
        token: The token.
    """
    app_log.warning("worker thread: %s", token.reveal())

    def plain_thread() -> None:
        # A thread started by hand does not inherit the call's context: only the
        # process-wide registry (the token Secret is alive) can mask this.
        logging.getLogger("vendor_sdk.pool").warning(
            "plain thread: %s %s", token.reveal(), ENV_TOKEN.reveal()
        )
        vendor_log.warning("plain thread, vendor: %s", token.reveal())

    thread = threading.Thread(target=plain_thread)
    thread.start()
    thread.join()
    return 2


@tool
def env_error() -> int:
    """Fail quoting the process-wide token."""
    raise VaultError(f"env token {ENV_TOKEN.reveal()} refused")


@attrs.frozen
class Confirm:
    ok: bool


@tool
def confirm_first(account: str, token: Secret[str]) -> str | NeedsInput:
    """
    Ask for confirmation before using the token (a requestState round trip).

    Args:
        account: Where to.
        token: The token.
    """
    answer = ToolContext.current().input_responses.get("confirm")
    if not isinstance(answer, ElicitResult):
        app_log.info("asking before using %s", token.reveal())
        return NeedsInput({"confirm": Elicit("Sure?", schema=Confirm)}, state=account)
    return f"used on {account}"


@tool
def reveal_result(token: Secret[str]) -> str:
    """
    Return the revealed token as the result (careless code).

    Args:
        token: The token.
    """
    return f"your token is {token.reveal()}"


@tool
def reveal_structured(token: Secret[str]) -> dict[str, str]:
    """
    Return the revealed token and the process-wide one in structured content.

    Args:
        token: The token.
    """
    return {"token": token.reveal(), "env": ENV_TOKEN.reveal()}


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
            every_logger,
            worker_threads,
            env_error,
            confirm_first,
            reveal_result,
            reveal_structured,
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
    ("every_logger", {"token": CANARY}),
    ("worker_threads", {"token": CANARY}),
    ("env_error", {}),
    ("confirm_first", {"account": "acc", "token": CANARY}),
    ("reveal_result", {"token": CANARY}),
    ("reveal_structured", {"token": CANARY}),
]

if __name__ == "__main__":
    logging.basicConfig(level=logging.DEBUG)
    # Outside any call: only the process-wide registry can mask this.
    app_log.warning("starting with %s", ENV_TOKEN.reveal())
    trio.run(make_server().serve_stdio)
