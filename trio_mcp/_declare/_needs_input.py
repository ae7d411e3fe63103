"""``NeedsInput``: a handler's request for more input from the client (multi round-trip).

The value names what to ask for; the dispatcher seals the carried state and shapes
the ``input_required`` result. It never enters an output schema.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .._json import JsonValue

__all__ = ["NeedsInput"]


@attrs.frozen
class NeedsInput:
    """Ask the client for input and call again with its responses.

    Args:
        requests: Input requests by key (``Elicit``, ``ElicitUrl``, ``Sample``,
            ``ListRoots``); the keys come back in ``ctx.input_responses``.
        state: A JSON value carried to the next round, integrity-protected.
    """

    requests: Mapping[str, object] = attrs.field(factory=dict, converter=dict)
    state: JsonValue = None
