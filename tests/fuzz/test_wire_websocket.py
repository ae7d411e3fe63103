"""Wire fuzzing over one WebSocket connection on 127.0.0.1.

Hostile bytes and valid requests, interleaved, in batches on one long-lived server
(see fuzz_targets.py for the invariants checked after every batch).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_targets import Target, WebSocketTarget, fuzz, serving


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    with serving(WebSocketTarget) as running:
        yield running


def test_websocket_survives_and_answers_hostile_input(target: Target) -> None:
    fuzz(target)
