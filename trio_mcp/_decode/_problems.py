"""Problem(path, message) values from the exception groups decoding raises.

cattrs, with detailed validation, gathers every failure into nested groups whose
notes say which attribute, index or key failed; this module turns that tree into
one flat list of problems. A message never quotes the rejected value (it may be a
secret), so exception text is shown only where it cannot quote one: our hooks
raise ``Invalid`` with fixed messages, a dataclass ``__post_init__`` refusal is
shown when it quotes no value the caller sent (``refusal_message``), and anything
else becomes ``is not valid``.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from cattrs.errors import (
    AttributeValidationNote,
    BaseValidationError,
    ForbiddenExtraKeysError,
    IterableValidationNote,
)

from .._errors import Problem

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Invalid", "at", "problems_of", "refusal_message", "shown"]

FALLBACK = "is not valid"
REQUIRED = "this field is required"
UNKNOWN = "unknown field"


class Invalid(ValueError):
    """A value does not fit its type; each message is fixed text, never the value."""

    def __init__(self, *messages: str) -> None:
        self.messages = messages
        super().__init__("; ".join(messages))


#: The longest refusal text shown; longer text is cut (a message, not a report).
_LONGEST = 200


def refusal_message(check: object, exc: Exception, sent: object) -> str:
    """The message for a class that refused its decoded fields (``__post_init__``).

    As for attrs validators: a ``described(...)`` message on ``check`` first.
    Else the exception's first line, unless its text quotes a value of ``sent``
    (the JSON the caller sent for the class, a ``Secret[str]``'s among them) as it
    is or as ``repr`` or JSON escape it: then ``is not valid``. Text that only
    quotes part of a value, or a value transformed, cannot be recognised: a
    check that must say more uses ``described``.
    """
    text = getattr(check, "describe", None)
    if isinstance(text, str) and text.strip():
        return text.strip()
    return shown(str(exc), sent)


def shown(text: str, sent: object) -> str:
    """``text``'s first line, or ``is not valid`` when ``text`` quotes a value of
    ``sent`` (see ``refusal_message``)."""
    lines = text.strip().splitlines()
    if not lines or not lines[0].strip():
        return FALLBACK
    if any(_quotes(text, leaf) for leaf in _leaves(sent, top=True)):
        return FALLBACK  # the whole text: a value may span the first line's end
    return lines[0].strip()[:_LONGEST]


def _leaves(value: object, *, top: bool = False) -> Iterator[str | int | float]:
    """Every string and number in a JSON value, and every key below the top."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not top:
                yield str(key)
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield value


def _quotes(text: str, leaf: str | int | float) -> bool:
    """Whether ``text`` holds ``leaf`` as it is, or as ``repr`` or JSON escape it."""
    if isinstance(leaf, str):
        forms = {leaf, repr(leaf)[1:-1], json.dumps(leaf)[1:-1]}
        return any(form and form in text for form in forms)
    number = re.escape(str(leaf))
    return re.search(rf"(?<![\d.]){number}(?![\d])", text) is not None


def at(exc: Exception, segment: str | int, tp: object) -> Exception:
    """Mark ``exc`` as having happened at ``segment`` below the current path."""
    note = AttributeValidationNote(f"@ {segment}", str(segment), tp)
    exc.__notes__ = [*getattr(exc, "__notes__", []), note]
    return exc


def _segment(exc: BaseException) -> str | None:
    for note in reversed(getattr(exc, "__notes__", ())):
        if isinstance(note, AttributeValidationNote):
            return note.name
        if isinstance(note, IterableValidationNote):
            return str(note.index)
    return None


def _join(path: str, segment: str) -> str:
    return f"{path}.{segment}" if path else segment


def _walk(exc: BaseException, path: str) -> Iterator[Problem]:
    if isinstance(exc, Invalid):
        for message in exc.messages:
            yield Problem(path, message)
    elif isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            yield Problem(_join(path, key), UNKNOWN)
    elif isinstance(exc, BaseValidationError):
        for sub in exc.exceptions:
            segment = _segment(sub)
            yield from _walk(sub, path if segment is None else _join(path, segment))
    elif isinstance(exc, KeyError) and _segment(exc) is not None:
        # cattrs reads a required key with o[name]: a KeyError is a missing field.
        yield Problem(path, REQUIRED)
    else:
        yield Problem(path, FALLBACK)


def problems_of(exc: BaseException) -> list[Problem]:
    """Return every problem in ``exc``, in the order they were found."""
    return list(_walk(exc, ""))
