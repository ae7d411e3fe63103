"""Wire fuzzing over a real subprocess on stdin and stdout.

Hostile bytes and valid requests, interleaved, in batches on one long-lived server
(see fuzz_targets.py for the invariants checked after every batch).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzz_targets import StdioTarget, Target, fuzz, serving


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    with serving(StdioTarget) as running:
        yield running


def test_stdio_survives_and_answers_hostile_input(target: Target) -> None:
    fuzz(target)
