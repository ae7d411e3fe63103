"""What comes back from an upstream for one relayed call: its notices and its
response.

Progress and log messages tied to the call are relayed to the inbound caller
through its ``ToolContext`` (so they follow the inbound request's own rules: its
progress token, its log level, nothing once it is a task). The response is the
result, or an ``Unanswered`` naming why not: a JSON-RPC error (its code and
message), or a result that asks for input, which a gateway does not relay.
"""

from __future__ import annotations

from .._context import ToolContext
from .._dispatch._relayed import Unanswered
from .._json import JsonObject, JsonValue

__all__ = ["relay_notice", "result_of"]


async def relay_notice(ctx: ToolContext, message: JsonObject) -> None:
    """Relay one notification an upstream tied to the call (progress, a log
    message); anything else, or one that does not fit, is dropped."""
    method = message.get("method")
    params = message.get("params")
    if not isinstance(params, dict):
        return
    try:
        if method == "notifications/progress":
            await ctx.progress(
                params.get("progress"),  # type: ignore[arg-type]
                params.get("total"),  # type: ignore[arg-type]
                params.get("message"),  # type: ignore[arg-type]
            )
        elif method == "notifications/message":
            logger = params.get("logger")
            await ctx.log(
                params.get("level"),  # type: ignore[arg-type]
                params.get("data"),
                logger=logger if isinstance(logger, str) else None,
            )
    except (TypeError, ValueError):
        pass  # an upstream's notice that does not fit is not relayed


def result_of(message: JsonValue) -> JsonObject:
    """The result of an upstream's response message.

    Raises:
        Unanswered: for a JSON-RPC error, a result that asks for input, or a
            response without a result object.
    """
    if not isinstance(message, dict):
        raise Unanswered("its response is not a JSON object")
    error = message.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        text = error.get("message")
        raise Unanswered(
            f"answered error {code}: {text}",
            code if isinstance(code, int) else None,
        )
    result = message.get("result")
    if not isinstance(result, dict):
        raise Unanswered("its response has no result object")
    if result.get("resultType", "complete") != "complete":
        raise Unanswered(
            "it asked for input (elicitation, sampling or roots), which a gateway "
            "does not relay"
        )
    return result
