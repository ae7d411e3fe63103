"""Secret[T]: a value that is redacted everywhere trio_mcp could show it.

Only ``reveal()`` hands out the plaintext; ``repr``, ``str``, formatting, schemas,
encoded results and receipts all see ``'**********'``. No I/O and no trio here.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Any, Generic, TypeVar, final, get_args

import attrs

from .._errors import InvalidArgument
from ._redact import MASK, register, track

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic_core import CoreSchema

__all__ = ["MASK", "Secret"]

T = TypeVar("T")


@final
@attrs.frozen(repr=False, eq=False)
class Secret(Generic[T]):
    """A value, such as a token, that never appears in output, logs or errors.

    Annotate a parameter ``Secret[str]``; the handler calls ``reveal()`` at the
    one place the plaintext is needed.
    """

    _value: T

    def __attrs_post_init__(self) -> None:
        if isinstance(self._value, Secret):
            raise InvalidArgument(
                "Secret(...) must hold the plaintext, not another Secret: pass the "
                "Secret itself, or Secret(secret.reveal())"
            )
        # Inside a call, remember the plaintext so error messages, notifications
        # and log records of that call can mask it; process-wide, mask it in every
        # log record while this Secret lives (see _redact).
        register(self._value)
        track(self, self._value)

    def reveal(self) -> T:
        """Return the plaintext; keep it out of anything that is logged or returned.

        Inside a call, the plaintext is then masked in that call's reply (a
        module-level ``Secret`` revealed by a handler included).
        """
        register(self._value)
        return self._value

    def _plain(self) -> T:
        """The plaintext, without registering it in the running call (for masks)."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        mine, theirs = self._value, other._value
        # Constant time for text, so equality checks do not leak a prefix's length.
        if isinstance(mine, str) and isinstance(theirs, str):
            return hmac.compare_digest(mine.encode(), theirs.encode())
        return bool(mine == theirs)

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """``Secret[str]`` as a field of a pydantic model (pydantic calls this).

        A string becomes a ``Secret`` (registered like every decoded secret), a
        ``Secret`` stays one, and JSON shows the mask, never the plaintext.
        pydantic's own imports happen here, so only a model with a secret needs
        them.
        """
        from pydantic_core import core_schema

        if get_args(source) != (str,):
            raise TypeError(
                f"{source!r} inside a pydantic model: use Secret[str] (a secret "
                "is a string on the wire)"
            )
        made = core_schema.no_info_after_validator_function(
            cls, handler.generate_schema(str)
        )
        return core_schema.json_or_python_schema(
            json_schema=made,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), made]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                _masked, when_used="json"
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core: CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        """The schema of ``Secret[str]`` everywhere: a write-only string."""
        del core, handler
        return {"type": "string", "writeOnly": True}


def _masked(value: object) -> str:
    del value
    return MASK
