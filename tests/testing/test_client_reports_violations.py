"""The test client reports a message outside the revision's schema as a
``SchemaViolation``, whatever the test was awaiting when it arrived.

Before, the violation cancelled the client's nursery while the test awaited a reply;
``__aexit__`` then awaited the closing of the server's input, a checkpoint that
raised ``Cancelled`` before the nursery was exited, and the test failed with Trio's
"Nursery stack corrupted" instead of the violation. Instructions overwritten with a
number after construction (``Server`` refuses one) stand in for any server bug that
puts a value of the wrong type on the wire.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from trio_mcp import Server
from trio_mcp.testing import McpTestClient, SchemaViolation


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def test_a_message_outside_the_schema_fails_with_schema_violation() -> None:
    server = Server("s", "1")
    server._dispatcher.instructions = cast(Any, 5)

    with pytest.raises((SchemaViolation, BaseExceptionGroup)) as caught:
        async with McpTestClient(server) as client:
            await client.discover()

    leaves = _leaves(caught.value)
    assert [type(leaf) for leaf in leaves] == [SchemaViolation]
    assert '"instructions": 5' in str(leaves[0])
