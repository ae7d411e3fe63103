"""Wire fuzzing over every transport: ``Server.serve_messages`` (the loop
McpTestClient drives), a real subprocess on stdin and stdout, Streamable HTTP on
Hypercorn at 127.0.0.1, and one WebSocket connection on 127.0.0.1.

Hostile bytes and valid requests, interleaved, in batches on one long-lived server
per transport (see fuzz_targets.py for the invariants checked after every batch).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_targets import (
    HttpTarget,
    InProcessTarget,
    StdioTarget,
    Target,
    WebSocketTarget,
    fuzz,
    serving,
)

TARGETS = {
    "in_process": InProcessTarget,
    "stdio": StdioTarget,
    "http": HttpTarget,
    "websocket": WebSocketTarget,
}


@pytest.fixture(scope="module", params=list(TARGETS.values()), ids=list(TARGETS))
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    with serving(request.param) as running:
        yield running


def test_the_server_survives_and_answers_hostile_input(target: Target) -> None:
    fuzz(target)
