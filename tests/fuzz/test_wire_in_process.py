"""Wire fuzzing over Server.serve_messages, the loop McpTestClient drives.

Hostile bytes and valid requests, interleaved, in batches on one long-lived server
(see fuzz_targets.py for the invariants checked after every batch).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_targets import InProcessTarget, Target, fuzz, serving


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    with serving(InProcessTarget) as running:
        yield running


def test_in_process_survives_and_answers_hostile_input(target: Target) -> None:
    fuzz(target)
