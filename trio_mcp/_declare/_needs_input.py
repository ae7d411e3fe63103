"""``NeedsInput``: a handler's request for more input from the client (multi round-trip).

The value names what to ask for; the dispatcher checks the client declared what each
request needs, seals the carried state and shapes the ``input_required`` result. It
never enters an output schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import final

import attrs

from .. import _checks as checks
from .._errors import InvalidArgument
from .._json import JsonValue, dumps
from ._inputs import INPUT_REQUESTS, InputRequest

__all__ = ["Answer", "NeedsInput"]


def _requests(value: Mapping[str, InputRequest]) -> dict[str, InputRequest]:
    if not isinstance(value, Mapping):
        raise checks.invalid(
            "NeedsInput.requests", "a mapping of keys to input requests", value
        )
    out = dict(value)
    for key, request in out.items():
        if not isinstance(key, str) or not key:
            raise checks.invalid(
                "each key of NeedsInput.requests", "a non-empty str", key
            )
        if not isinstance(request, INPUT_REQUESTS):
            raise checks.invalid(
                f"NeedsInput.requests[{key!r}]",
                "Elicit, ElicitUrl, Sample or ListRoots",
                request,
            )
    return out


def _json_state(instance: object, attribute: object, value: JsonValue) -> None:
    try:
        dumps(value)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(
            "NeedsInput.state must be a JSON value (dicts, lists, str, numbers, "
            "bool, None)"
        ) from exc


@final
@attrs.frozen
class NeedsInput:
    """Ask the client for input and call again with its responses.

    Args:
        requests: Input requests by key (``Elicit``, ``ElicitUrl``, ``Sample``,
            ``ListRoots``); the retry's responses come back under the same keys in
            ``ToolContext.current().input_responses``.
        state: A JSON value carried to the next round (``ctx.state``), sealed
            (AES-256-GCM) in ``requestState``: the client can neither read nor
            change it, and it opens only for the same caller and request.

    Raises:
        McpError.InvalidArgument: if a request is not an input request or the state
            is not JSON (also a ``TypeError``, what this raised before).
    """

    requests: Mapping[str, InputRequest] = attrs.field(
        factory=dict, converter=_requests
    )
    state: JsonValue = attrs.field(default=None, validator=_json_state)


@final
class Answer:
    """Namespaces the values a handler may answer with besides its result."""

    @staticmethod
    def needs_input(
        requests: Mapping[str, InputRequest] | None = None, state: JsonValue = None
    ) -> NeedsInput:
        """Return ``NeedsInput(requests, state)``: ask the client, then call again."""
        return NeedsInput(requests or {}, state)
