"""Wire fuzzing over Streamable HTTP on Hypercorn, 127.0.0.1.

Hostile bytes and valid requests, interleaved, in batches on one long-lived server
(see fuzz_targets.py for the invariants checked after every batch).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_targets import HttpTarget, Target, fuzz, serving


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    with serving(HttpTarget) as running:
        yield running


def test_http_survives_and_answers_hostile_input(target: Target) -> None:
    fuzz(target)
