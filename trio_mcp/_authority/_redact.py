"""The per-call registry of secret plaintexts, and the redaction that masks them.

While a call runs, every secret value it has seen (a decoded ``Secret`` argument, a
``Secret`` default, a ``Secret`` constructed during the call, in the handler's task
or its worker thread) is registered in a context variable. ``redact(text)`` replaces
each registered value, longest first, with ``'**********'``; the dispatcher applies
it to error messages, ``ToolContext`` to progress and log notifications, and
``SecretFilter`` to every record on the ``trio_mcp`` loggers (message, arguments and
the formatted traceback).

Outside a call nothing is registered and every function here is the identity. The
registry is a mutable set shared by the call's context copies (``to_thread`` runs in
a copy), so a value registered in a worker thread is masked in the call's task too.
No trio and no I/O here.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from .._json import JsonValue

__all__ = [
    "MASK",
    "SecretFilter",
    "close_registry",
    "install_log_filter",
    "mask_write_only",
    "open_registry",
    "redact",
    "redact_json",
    "register",
    "register_in",
]

MASK = "**********"
"""What a secret looks like wherever it is shown or encoded."""

_values: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "trio_mcp_secret_values", default=None
)

#: How deep ``register_in`` looks into arguments for ``Secret`` values.
_MAX_DEPTH = 16


def open_registry() -> contextvars.Token[set[str] | None]:
    """Start an empty registry for the running call; return the token that ends it."""
    install_log_filter()
    return _values.set(set())


def close_registry(token: contextvars.Token[set[str] | None]) -> None:
    """End the registry started by ``open_registry``."""
    _values.reset(token)


def register(value: object) -> None:
    """Remember ``value`` as secret plaintext for the running call (if any).

    Text is registered as is; bytes as their UTF-8 text; other values by ``str()``
    when that is at least four characters (shorter renderings, such as small
    numbers, would mask unrelated text).
    """
    values = _values.get()
    if values is None:
        return
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif not isinstance(value, str):
        value = str(value)
        if len(value) < 4:
            return
    if value:
        values.add(value)


def register_in(value: object, _depth: int = 0) -> None:
    """Register the plaintext of every ``Secret`` found in ``value``.

    Looks through mappings, sequences, sets and attrs instances, as decoded
    arguments are built from them; this is how ``Secret`` defaults are registered.
    """
    from ._secrets import Secret

    if _depth > _MAX_DEPTH or _values.get() is None:
        return
    if isinstance(value, Secret):
        register(value.reveal())
    elif isinstance(value, str | bytes | int | float | bool | None):
        return
    elif isinstance(value, Mapping):
        for item in value.values():
            register_in(item, _depth + 1)
    elif isinstance(value, Iterable) and isinstance(
        value, list | tuple | set | frozenset
    ):
        for item in value:
            register_in(item, _depth + 1)
    elif attrs.has(type(value)):
        for field in getattr(type(value), "__attrs_attrs__", ()):
            register_in(getattr(value, field.name, None), _depth + 1)


def active() -> bool:
    """Whether the running call has registered any secret value."""
    return bool(_values.get())


def redact(text: str) -> str:
    """Return ``text`` with every registered secret value replaced by the mask."""
    values = _values.get()
    if not values:
        return text
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, MASK)
    return text


def redact_json(value: JsonValue) -> JsonValue:
    """Return a JSON value with every string (and object key) redacted."""
    if not active():
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {redact(k): redact_json(v) for k, v in value.items()}
    return value


def mask_write_only(value: JsonValue, schema: JsonValue) -> JsonValue:
    """Return ``value`` with every value at a ``writeOnly`` schema replaced by the mask.

    For keys and digests (``requestState`` bindings, caches): a ``Secret[str]``
    argument then never participates in a key, only the fact that it was sent. Follows
    ``properties``, ``additionalProperties``, ``items``, ``prefixItems`` and
    ``oneOf``/``anyOf`` (every branch that could apply is followed).
    """
    if not isinstance(schema, dict):
        return value
    if schema.get("writeOnly") is True:
        return MASK
    for branch_key in ("oneOf", "anyOf", "allOf"):
        branches = schema.get(branch_key)
        if isinstance(branches, list):
            for branch in branches:
                value = mask_write_only(value, branch)
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        return {
            key: mask_write_only(item, props.get(key, extra))
            for key, item in value.items()
        }
    if isinstance(value, list):
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items")
        return [
            mask_write_only(item, prefix[i] if i < len(prefix) else items)
            for i, item in enumerate(value)
        ]
    return value


class SecretFilter(logging.Filter):
    """Mask the running call's secret values in log records.

    The message is rendered with its arguments and redacted; a traceback is
    formatted here, redacted, and kept as ``exc_text`` (``exc_info`` is dropped, so
    no handler can render the original exception, its locals or its arguments).
    Outside a call, or when the call has no secrets, records pass untouched.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place; never drop it."""
        if not active():
            return True
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_info[1] is not None:
            text = record.exc_text or _FORMATTER.formatException(record.exc_info)
            record.exc_info, record.exc_text = None, redact(text)
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


_FORMATTER = logging.Formatter()
_FILTER = SecretFilter()
_installed: set[str] = set()
_seen_loggers = -1


def install_log_filter() -> None:
    """Attach ``SecretFilter`` to the ``trio_mcp`` logger and each of its children.

    A logger's filters see only records logged on that logger (not those
    propagated from children), so every ``trio_mcp.*`` logger gets its own. Cheap
    when no logger was created since the last call.
    """
    global _seen_loggers
    manager = logging.Logger.manager
    if len(manager.loggerDict) == _seen_loggers:
        return
    _seen_loggers = len(manager.loggerDict)
    names = ["trio_mcp"] + [
        name
        for name, obj in list(manager.loggerDict.items())
        if name.startswith("trio_mcp.") and isinstance(obj, logging.Logger)
    ]
    for name in names:
        if name not in _installed:
            logging.getLogger(name).addFilter(_FILTER)
            _installed.add(name)
