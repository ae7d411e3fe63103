"""The pytest plugin (entry point ``pytest11``): an ``mcp_client`` fixture.

Define an ``mcp_server`` fixture returning a ``Server`` in a test module (or
conftest); ``mcp_client`` is then an ``McpTestClient`` for it, under pytest-trio.

Beside pytest-asyncio. In ``asyncio_mode = "auto"`` pytest-asyncio claims every
async test and every async fixture, Trio tests and their fixtures included, and
runs them on an asyncio loop, where Trio code fails with an error that names
neither plugin (``'RunContext' object has no attribute 'runner'``). This plugin
settles each async test for one of the two:

- the nearer explicit mark wins (on the function, then its class, module, ...);
- a mark only one plugin's configuration added (``trio_mode = true``, auto mode)
  loses to an explicit one; when both were added that way, Trio wins, since
  ``trio_mode = true`` is the project's own choice of pytest-trio;
- a Trio test's async fixtures go to pytest-trio, an asyncio test's to
  pytest-asyncio.

``mcp_client`` requested by a test that is not a Trio test fails at once with a
message that says how to make it one.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Generator
from typing import Any, NoReturn

import pytest
import trio

from .._server import Server
from ._client import NO_PYTEST_TRIO, NOT_A_TRIO_TEST, McpTestClient


@pytest.fixture
async def mcp_client(mcp_server: Server) -> AsyncIterator[McpTestClient]:
    """An in-process client for the test's ``mcp_server`` fixture."""
    try:
        trio.lowlevel.current_task()
    except RuntimeError:  # another event loop runs this fixture (anyio's asyncio)
        pytest.fail(
            NOT_A_TRIO_TEST.format(
                what="mcp_client", test="this test", taken=" (another loop ran it)"
            ),
            pytrace=False,
        )
    async with McpTestClient(mcp_server) as client:
        yield client


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Give each async test claimed by both plugins to one (after pytest-trio's
    ``trio_mode`` marks)."""
    asyncio_item = _asyncio_item_class(config)
    for index, item in enumerate(items):
        if not isinstance(item, pytest.Function) or not _has(item, "trio"):
            continue
        taken_by_asyncio = asyncio_item is not None and isinstance(item, asyncio_item)
        if not taken_by_asyncio and not _has(item, "asyncio"):
            continue
        winner = _winner(item)
        if winner == "trio" and taken_by_asyncio:
            items[index] = _as_trio_test(item)
        elif winner == "asyncio":
            # The trio mark on the item itself is trio_mode's (pytest-trio adds it
            # to every async test); a class's or module's stays, and both run it.
            item.own_markers = [m for m in item.own_markers if m.name != "trio"]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    """Refuse ``mcp_client`` outside a Trio test; keep a Trio test's async
    fixtures from pytest-asyncio's auto mode."""
    node = request.node
    func = fixturedef.func
    swap: Callable[..., object] | None = None
    if isinstance(node, pytest.Function) and _has(node, "trio"):
        if _asyncio_would_take(request.config, fixturedef):
            swap = _for_pytest_trio(func)
    elif _is_ours(fixturedef) and not _has(node, "anyio"):
        taken = " (pytest-asyncio runs it)" if _has(node, "asyncio") else ""
        # pytest-trio registers its plugin as "trio"; without it no mark helps.
        text = (
            NOT_A_TRIO_TEST
            if request.config.pluginmanager.has_plugin("trio")
            else NO_PYTEST_TRIO
        )
        swap = _failing(text.format(what="mcp_client", test=node.name, taken=taken))
    if swap is None:
        return (yield)
    # As pytest-asyncio swaps it (the attribute is final in pytest's typing).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fixturedef, "func", swap)
        return (yield)


def _has(node: pytest.Item | pytest.Collector, name: str) -> bool:
    return node.get_closest_marker(name) is not None


def _asyncio_item_class(config: pytest.Config) -> type | None:
    """pytest-asyncio's class of the test items it runs, when it is loaded."""
    plugin = config.pluginmanager.get_plugin("asyncio")
    found = getattr(plugin, "PytestAsyncioFunction", None)
    return found if isinstance(found, type) else None


def _distance(item: pytest.Function, name: str) -> int | None:
    """How near ``item`` an explicit ``name`` mark is: 0 on the function (or its
    parameters), then one more per enclosing class, module, package; None: no
    explicit mark (perhaps one a plugin's configuration added)."""
    own = [*getattr(item.obj, "pytestmark", ())]
    callspec = getattr(item, "callspec", None)
    own += getattr(callspec, "marks", ())
    if any(getattr(mark, "name", None) == name for mark in own):
        return 0
    for depth, node in enumerate(reversed(item.listchain()[:-1]), start=1):
        if any(mark.name == name for mark in node.own_markers):
            return depth
    return None


def _winner(item: pytest.Function) -> str | None:
    """Which plugin runs ``item``: the nearer explicit mark's; Trio's when neither
    is explicit; None when both are equally near (left to the two plugins)."""
    trio_at, asyncio_at = _distance(item, "trio"), _distance(item, "asyncio")
    if trio_at == asyncio_at:
        return "trio" if trio_at is None else None
    if asyncio_at is None or (trio_at is not None and trio_at < asyncio_at):
        return "trio"
    return "asyncio"


def _as_trio_test(item: pytest.Function) -> pytest.Function:
    """``item`` as the plain test item pytest-asyncio made it from, without the
    asyncio mark."""
    plain = pytest.Function.from_parent(
        item.parent,
        name=item.name,
        callspec=getattr(item, "callspec", None),
        callobj=item.obj,
        fixtureinfo=item._fixtureinfo,
        keywords=item.keywords,
        originalname=item.originalname,
    )
    plain.own_markers = [m for m in item.own_markers if m.name != "asyncio"]
    return plain


def _is_ours(fixturedef: pytest.FixtureDef[Any]) -> bool:
    """Whether ``fixturedef`` is this module's ``mcp_client`` (not a project's own)."""
    return (
        fixturedef.argname == "mcp_client"
        and getattr(fixturedef.func, "__module__", None) == __name__
    )


def _asyncio_would_take(
    config: pytest.Config, fixturedef: pytest.FixtureDef[Any]
) -> bool:
    """Whether a Trio test's fixture is an async function pytest-asyncio would
    take (auto mode takes every one not made with ``pytest_asyncio.fixture``)."""
    if not config.pluginmanager.has_plugin("asyncio"):
        return False
    func = fixturedef.func
    if getattr(func, "_force_asyncio_fixture", False):
        return False
    return fixturedef.scope == "function" and (
        inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
    )


def _for_pytest_trio(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` as pytest-trio's ``trio_fixture`` marks it, behind a plain function,
    so pytest-asyncio's auto mode does not see an async function to take."""

    def fixture(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    fixture.__name__ = getattr(func, "__name__", "fixture")
    fixture._force_trio_fixture = True  # type: ignore[attr-defined]
    return fixture


def _failing(message: str) -> Callable[..., NoReturn]:
    """A fixture function that fails the test with ``message`` when set up.

    Swapped in rather than failing in the hook, so pytest records the failure as
    the fixture's, as for any fixture that raises.
    """

    def fixture(*args: object, **kwargs: object) -> NoReturn:
        pytest.fail(message, pytrace=False)

    return fixture
