"""JSON values as Python sees them, and the one compact encoding we write.

Raw JSON is ``JsonValue``, a recursive alias, never ``Any``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias

__all__ = [
    "DuplicateKey",
    "JsonObject",
    "JsonValue",
    "could_exceed",
    "depth_exceeds",
    "dumps",
    "encode_message",
    "escaped",
    "loads",
]

JsonValue: TypeAlias = (
    "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
)
JsonObject: TypeAlias = "dict[str, JsonValue]"

_encoder = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)


_ascii_encoder = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
)


def _one_shot(encoder: json.JSONEncoder) -> Callable[[JsonValue], str]:
    """``encoder.encode``, with the C encoder it would build on every call built once.

    ``JSONEncoder.encode`` makes a new C encoder (and a ``floatstr`` closure) per
    value; with no indent, no circular check and compact separators that set-up is
    most of the time a small message takes. The one built here has the settings
    ``encoder`` passes (``default``, ``allow_nan``, ...), so the text is the same.
    Without the C accelerator, ``encoder.encode`` itself.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has it
        return encoder.encode
    c_encode = make(
        None,  # markers: check_circular=False
        encoder.default,
        json.encoder.encode_basestring,
        None,  # indent
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )

    def encode(value: JsonValue) -> str:
        return "".join(c_encode(value, 0))

    return encode


_encode = _one_shot(_encoder)


def dumps(value: JsonValue) -> str:
    """Encode compactly: one line, no spaces, no NaN (the wire forbids them)."""
    return _encode(value)


def encode_message(value: JsonValue) -> bytes:
    """Encode one message for the wire: compact JSON in UTF-8.

    A string holding a lone surrogate (JSON may carry ``"\\ud800"``, and Python
    decodes it into a ``str`` that UTF-8 cannot encode) is escaped on the way out:
    the message is then written with ``\\uXXXX`` escapes, which is the same JSON
    value, instead of failing. Every transport writes through here.

    Raises:
        ValueError: for NaN or infinity (not JSON); TypeError for a non-JSON value.
    """
    text = _encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _ascii_encoder.encode(value).encode("ascii")


def escaped(text: str, *, ascii: bool = False) -> bytes | None:
    """How ``encode_message`` writes ``text`` inside a JSON string, without quotes.

    UTF-8, or (``ascii``) the escapes of its fallback for lone surrogates. None
    where UTF-8 cannot write ``text`` (a lone surrogate): no UTF-8 message holds it.
    The encoder escapes one character at a time, so a string holding ``text`` is
    written holding these bytes.
    """
    # The functions the two encoders write every string with (``_one_shot`` and
    # ``JSONEncoder.iterencode`` pass them to the C encoder): the same text.
    if ascii:
        return json.encoder.encode_basestring_ascii(text)[1:-1].encode("ascii")
    try:
        return json.encoder.encode_basestring(text)[1:-1].encode("utf-8")
    except UnicodeEncodeError:
        return None


class DuplicateKey(ValueError):
    """A JSON object names one member twice.

    RFC 8259 §4 leaves such an object to each parser (most keep the last value, some
    the first, some refuse), so a gateway and this server could read two different
    requests from the same bytes: it is refused, whichever value came last.
    """

    def __init__(self, key: str) -> None:
        super().__init__(f"the member name {_shown(key)} appears twice in one object")
        self.key = key


def _shown(key: str, most: int = 64) -> str:
    """``key`` quoted for a message, cut to ``most`` characters."""
    return repr(key if len(key) <= most else key[:most] + "...")


def _object(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    """Each object the scanner reads: a dict, unless a name repeats.

    The C scanner hands the members over as a list (``object_pairs_hook``): one
    ``dict`` of them, and comparing the two lengths, is the whole cost.
    """
    made = dict(pairs)
    if len(made) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return made


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_object)
#: The scanner ``_decoder.decode`` runs after skipping whitespace (an instance
#: attribute ``JSONDecoder.__init__`` sets, with the decoder's settings).
_scan_once: Callable[[str, int], tuple[JsonValue, int]] = vars(_decoder)["scan_once"]


def loads(text: str | bytes) -> JsonValue:
    """Decode strict JSON (no NaN or Infinity, no member name twice in an object).

    Raises ValueError (``DuplicateKey`` for a repeated name) or RecursionError.

    A text that is one value from its first character to its last is scanned
    directly; anything else (surrounding whitespace, extra data, no value at all)
    takes ``JSONDecoder.decode``, which accepts or refuses it with its own message.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        value: JsonValue
        value, end = _scan_once(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):
        value = _decoder.decode(text)
    return value


def could_exceed(text: str | bytes, max_depth: int) -> bool:
    """Whether ``text`` has enough brackets to nest deeper than ``max_depth``.

    A C-speed count that spares the walk for ordinary messages; brackets inside
    strings are counted too, so it only ever errs towards walking.
    """
    if isinstance(text, bytes):
        return text.count(b"{") + text.count(b"[") > max_depth
    return text.count("{") + text.count("[") > max_depth


def depth_exceeds(value: JsonValue, max_depth: int) -> bool:
    """Return whether arrays and objects nest deeper than ``max_depth``.

    Iterative, so a hostile document cannot exhaust the stack here.
    """
    stack: list[tuple[JsonValue, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > max_depth:
                return True
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth > max_depth:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False
