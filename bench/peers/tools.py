"""What every peer's three benchmark tools compute, so all peers return the same values.

The same bodies as ``examples/bench_server.py``: ``echo(text)``, ``add(a, b)`` and
``search(query, limit=20)`` returning ``limit`` records.
"""

from __future__ import annotations

TITLE = "Benchmark record with a short title"


def records(query: str, limit: int = 20) -> list[dict[str, str]]:
    """The ``search`` answer: ``limit`` records whose titles mention ``query``."""
    return [
        {"id": f"T-{i}", "title": f"{query} {TITLE} {i}"} for i in range(1, limit + 1)
    ]
