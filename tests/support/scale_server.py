"""The server the scale-out tests run as replicas and workers (``trio-mcp serve``).

Its tools say which process answered (``whoami``), publish resource updates
(``touch``), log (``chatty``) and ask for input across two rounds (``greet``), so a
test can see
where each request landed. With ``SCALE_REDIS_URL`` set it shares changes through a
``RedisBroadcast`` with a short outage grace, so outage tests run quickly; with
``SCALE_STORE_URL`` it shares buckets, task records and changes through a
``RedisStore``, and its task tools (``ask_name``, ``wait_cancel``, ``quick``) let a
test follow a task across replicas; the durable ones (``durable_*``, beside
``plain_work``) let it kill the replica running one and see another finish it.
"""

from __future__ import annotations

import os

import attrs
import trio

from trio_mcp import (
    Elicit,
    ElicitResult,
    NeedsInput,
    RedisBroadcast,
    RedisStore,
    Secret,
    Server,
    Tool,
    ToolContext,
    resource,
    tool,
)
from trio_mcp._instance import instance_id


@attrs.frozen
class UserName:
    name: str


@tool
def whoami() -> str:
    """Return the serving process: ``"<replica>:<pid>"``."""
    return instance_id()


@tool
def greet() -> str | NeedsInput:
    """Ask for a name in a first round; greet with it in the second."""
    ctx = ToolContext.current()
    answer = ctx.input_responses.get("user_name")
    if not isinstance(answer, ElicitResult) or not isinstance(answer.content, UserName):
        return NeedsInput(
            {"user_name": Elicit("What is your name?", schema=UserName)},
            state={"asked_by": instance_id()},
        )
    assert isinstance(ctx.state, dict)
    return f"{answer.content.name}: asked by {ctx.state['asked_by']}, answered by {instance_id()}"


@tool
async def chatty() -> str:
    """Log one debug message (sent at or above the caller's level), then say who
    answered."""
    await ToolContext.current().log("debug", "chatty")
    return instance_id()


@tool
async def touch(uri: str) -> str:
    """Publish an update of one ticket and say who published it.

    Args:
        uri: The ticket that changed, ``ticket://<id>``.
    """
    await server.notify_updated(uri)
    return instance_id()


@resource(uri="ticket://{ticket_id}", updatable=True)
def ticket(ticket_id: str) -> str:
    """One ticket.

    Args:
        ticket_id: The ticket's id.
    """
    return f"ticket {ticket_id}"


@tool(task="optional")
def ask_name() -> str | NeedsInput:
    """As a task: ask for a name, then greet with it and the process that ran it."""
    ctx = ToolContext.current()
    answer = ctx.input_responses.get("user_name")
    if not isinstance(answer, ElicitResult) or not isinstance(answer.content, UserName):
        return NeedsInput({"user_name": Elicit("What is your name?", schema=UserName)})
    return f"{answer.content.name}: task ran on {instance_id()}"


@tool(task="optional")
async def wait_cancel() -> str:
    """As a task: wait (at most a minute) until cancelled."""
    await trio.sleep(60)
    return "not cancelled"


@tool(task="optional")
async def quick(n: int) -> str:
    """As a task: answer with ``n`` and the process that ran it.

    Args:
        n: Echoed back, so a test can match results to calls.
    """
    await trio.sleep(0.01)
    return f"{n}@{instance_id()}"


@tool(task="optional", durable=True, max_attempts=3)
async def durable_work(n: int, seconds: float) -> str:
    """As a durable task: work for ``seconds``, then say which attempt of it ran
    where.

    Args:
        n: Echoed back, so a test can match results to calls.
        seconds: How long the work takes.
    """
    ctx = ToolContext.current()
    await trio.sleep(seconds)
    return f"{n}@{instance_id()}#{ctx.attempt}"


@tool(task="optional", durable=True, max_attempts=2)
async def durable_twice(seconds: float) -> str:
    """As a durable task of at most two attempts: work for ``seconds``.

    Args:
        seconds: How long the work takes.
    """
    await trio.sleep(seconds)
    return f"done@{instance_id()}#{ToolContext.current().attempt}"


@tool(task="optional", durable=True)
def durable_ask() -> str | NeedsInput:
    """As a durable task: ask for a name (again on each attempt), then greet."""
    ctx = ToolContext.current()
    answer = ctx.input_responses.get("user_name")
    if not isinstance(answer, ElicitResult) or not isinstance(answer.content, UserName):
        return NeedsInput({"user_name": Elicit("What is your name?", schema=UserName)})
    return f"{answer.content.name}@{instance_id()}#{ctx.attempt}"


@tool(task="optional", durable=True)
async def durable_secret(token: Secret[str], seconds: float) -> str:
    """As a durable task: hold a secret argument while working for ``seconds``.

    Args:
        token: A secret; it must never be stored in clear.
        seconds: How long the work takes.
    """
    await trio.sleep(seconds)
    return f"{len(token.reveal())}@{instance_id()}#{ToolContext.current().attempt}"


@tool(task="optional")
async def plain_work(seconds: float) -> str:
    """As a task that is not durable: work for ``seconds``.

    Args:
        seconds: How long the work takes.
    """
    await trio.sleep(seconds)
    return f"plain@{instance_id()}"


DURABLE_TOOLS: list[Tool] = [
    durable_work,
    durable_twice,
    durable_ask,
    durable_secret,
    plain_work,
]


def _store() -> RedisStore | None:
    url = os.environ.get("SCALE_STORE_URL")
    heartbeat = float(os.environ.get("SCALE_HEARTBEAT", "1.0"))
    return RedisStore(url, timeout=1.0, heartbeat=heartbeat) if url else None


def _broadcast() -> RedisBroadcast | None:
    url = os.environ.get("SCALE_REDIS_URL")
    if not url:
        return None
    return RedisBroadcast(
        url, outage_grace=0.5, reconnect_delay=0.05, max_reconnect_delay=0.25
    )


server = Server(
    "scale-test",
    "1.0",
    tools=[whoami, greet, chatty, touch, ask_name, wait_cancel, quick, *DURABLE_TOOLS],
    resources=[ticket],
    broadcast=_broadcast(),
    store=_store(),
)
