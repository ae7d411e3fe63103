"""The registries of secret plaintexts, and the redaction that masks them.

Two registries feed ``redact(text)``, which replaces each value, longest first, with
``'**********'``:

- per call: while a call runs, every secret value it has seen (a decoded ``Secret``
  argument, a ``Secret`` default, a ``Secret`` constructed during the call, in the
  handler's task or its worker thread) is registered in a context variable, held
  strongly until the call ends. The set is shared by the call's context copies
  (``to_thread`` runs in a copy), so a value registered in a worker thread is masked
  in the call's task too.
- process-wide: every ``Secret`` ever constructed (module-level, loaded from the
  environment, made by a library) is held *weakly*, by identity; its plaintext is
  masked for exactly as long as the ``Secret`` lives. Nothing here keeps a plaintext
  alive: keep the ``Secret``, not the revealed string, to keep it masked.

What goes to a client (replies, progress and log notifications) is masked with the
running call's values alone (``call_values``), by structure: string values the
handler produced, never keys or protocol fields (``_dispatch._mask``). The log record
factory installed here masks every record made by any logger in the process
(message, arguments, the formatted traceback and stack), in any thread, with both
registries. What this cannot see is listed in docs/design.md ("Where redaction
applies"). No trio and no I/O here.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .._json import dumps

if TYPE_CHECKING:
    from .._json import JsonValue

__all__ = [
    "MASK",
    "call_values",
    "mask_json_values",
    "mask_text",
    "SecretFilter",
    "close_registry",
    "install_log_filter",
    "mask_write_only",
    "open_registry",
    "redact",
    "redact_json",
    "redact_record",
    "register",
    "reveal_all",
    "register_in",
    "track",
    "wrap_write_only",
]

MASK = "**********"
"""What a secret looks like wherever it is shown or encoded."""

_values: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "trio_mcp_secret_values", default=None
)

#: How deep ``register_in`` looks into arguments for ``Secret`` values.
_MAX_DEPTH = 16
#: Shortest plaintext masked process-wide: a shorter one (a small number, one
#: letter) would mask unrelated text in every log line of the process. Inside its
#: call a text secret of any length is still masked.
MIN_PROCESS_WIDE = 4


def _text(value: object) -> str:
    """The text a secret value shows up as: itself, UTF-8 for bytes, else ``str()``."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode(errors="replace")  # UTF-8, the default
    return str(value)


class _LiveSecrets:
    """Every living ``Secret``, weakly held by identity; their plaintexts, cached.

    Identity, not equality: two equal secrets are two entries, so one dying leaves
    the other masked. A weak reference's callback only marks the cache stale (it may
    run in any thread, at any allocation), and the next reader rebuilds it under the
    lock, dropping the dead. Adding is O(1); a rebuild is O(living secrets).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refs: dict[int, weakref.ref[Any]] = {}
        self._stale = False
        self._cache: tuple[tuple[str, ...], frozenset[str]] = ((), frozenset())
        self._prune_at = 64

    def _mark_stale(self, _ref: object = None) -> None:
        self._stale = True

    def add(self, secret: object, value: object) -> None:
        """Hold ``secret`` weakly; its plaintext is masked while it lives."""
        if len(_text(value)) < MIN_PROCESS_WIDE:
            return
        with self._lock:
            self._refs[id(secret)] = weakref.ref(secret, self._mark_stale)
            self._stale = True
            if len(self._refs) > self._prune_at:
                self._refs = {k: r for k, r in self._refs.items() if r() is not None}
                self._prune_at = max(64, 2 * len(self._refs))

    def snapshot(self) -> tuple[tuple[str, ...], frozenset[str]]:
        """The living plaintexts, longest first, and the same as a set."""
        if self._stale:
            with self._lock:
                self._stale = False
                texts: set[str] = set()
                alive: dict[int, weakref.ref[Any]] = {}
                for key, ref in self._refs.items():
                    secret = ref()
                    if secret is not None:
                        alive[key] = ref
                        # Not Secret.reveal(): that would register every
                        # living secret in whichever call happens to log now.
                        plain = getattr(secret, "_plain", secret.reveal)
                        texts.add(_text(plain()))
                self._refs = alive
                ordered = tuple(sorted(texts, key=len, reverse=True))
                self._cache = (ordered, frozenset(texts))
        return self._cache


_LIVE = _LiveSecrets()


def track(secret: object, value: object) -> None:
    """Mask ``value`` process-wide while ``secret`` lives; called by ``Secret``."""
    _LIVE.add(secret, value)
    _install_record_factory()


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
    text = _text(value)
    # An empty text would mask between every character; see MIN_PROCESS_WIDE.
    if text and (isinstance(value, str | bytes) or len(text) >= 4):
        values.add(text)


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
    elif attrs.has(kind := type(value)):
        for field in attrs.fields(kind):
            # A field declared init=False and never set has no value to look at.
            register_in(getattr(value, field.name, None), _depth + 1)


def _masked() -> tuple[str, ...]:
    """Every value to mask here and now: living secrets and the running call's."""
    living, living_set = _LIVE.snapshot()
    call = _values.get()
    if not call or call <= living_set:
        return living
    return tuple(sorted(call | living_set, key=len, reverse=True))


def active() -> bool:
    """Whether any secret value is registered (living, or in the running call)."""
    return bool(_values.get()) or bool(_LIVE.snapshot()[0])


def _replace(text: str, values: tuple[str, ...]) -> str:
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def redact(text: str) -> str:
    """Return ``text`` with every registered secret value replaced by the mask.

    For logs: the running call's secrets and every living ``Secret``. What goes on
    the wire to one client uses ``call_values`` alone.
    """
    return _replace(text, _masked())


def call_values() -> tuple[str, ...]:
    """The running call's secret plaintexts, longest first (empty outside a call).

    Only these are masked in replies and notifications: a secret of another call,
    or a ``Secret`` this call never saw, never changes what this client receives.
    """
    values = _values.get()
    if not values:
        return ()
    return tuple(sorted(values, key=len, reverse=True))


def mask_text(text: str, values: tuple[str, ...]) -> str:
    """``text`` with each of ``values`` replaced by the mask."""
    return _replace(text, values)


def mask_json_values(value: JsonValue, values: tuple[str, ...]) -> JsonValue:
    """A free-form JSON value (a log message's ``data``) with every string masked,
    its keys too: none of them is a protocol field, so the message keeps its shape."""
    if isinstance(value, str):
        return _replace(value, values)
    if isinstance(value, list):
        return [mask_json_values(item, values) for item in value]
    if isinstance(value, dict):
        return {
            _replace(k, values): mask_json_values(v, values) for k, v in value.items()
        }
    return value


def redact_json(value: JsonValue) -> JsonValue:
    """Return a JSON value with every string (and object key) redacted.

    The values to mask are gathered once for the whole value: a large result costs
    one substring search per string and living secret, nothing more.
    """
    values = _masked()
    if not values:
        return value
    if isinstance(value, dict | list) and all(map(_json_plain, values)):
        # Fast path: a value that appears nowhere in the compact JSON text appears
        # in none of its strings or keys (each is written there verbatim).
        try:
            text = dumps(value)
        except (TypeError, ValueError):
            text = None
        if text is not None and not any(v in text for v in values):
            return value
    return _redact_json(value, values)


def _json_plain(text: str) -> bool:
    """Whether the JSON encoder writes ``text`` unchanged inside a string."""
    return '"' not in text and "\\" not in text and text.isprintable()


def _redact_json(value: JsonValue, values: tuple[str, ...]) -> JsonValue:
    if isinstance(value, str):
        return _replace(value, values)
    if isinstance(value, list):
        return [_redact_json(item, values) for item in value]
    if isinstance(value, dict):
        return {_replace(k, values): _redact_json(v, values) for k, v in value.items()}
    return value


def mask_write_only(value: JsonValue, schema: JsonValue) -> JsonValue:
    """Return ``value`` with every value at a ``writeOnly`` schema replaced by the mask.

    For keys and digests (``requestState`` bindings, caches): a ``Secret[str]``
    argument then never participates in a key, only the fact that it was sent. Follows
    ``properties``, ``additionalProperties``, ``items``, ``prefixItems`` and
    ``oneOf``/``anyOf`` (every branch that could apply is followed).
    """
    return _at_write_only(value, schema, _to_mask)  # type: ignore[return-value]


def wrap_write_only(value: JsonValue, schema: JsonValue) -> object:
    """Return ``value`` with every value at a ``writeOnly`` schema wrapped in ``Secret``.

    How middleware sees a call's arguments: secrets only as ``Secret``.
    """
    return _at_write_only(value, schema, _to_secret)


def reveal_all(value: object) -> object:
    """Return ``value`` with every ``Secret`` inside (dicts and lists) revealed."""
    from ._secrets import Secret

    if isinstance(value, Secret):
        return value.reveal()
    if isinstance(value, Mapping):
        return {key: reveal_all(item) for key, item in value.items()}
    if isinstance(value, list):
        return [reveal_all(item) for item in value]
    return value


def _to_mask(value: object) -> object:
    return MASK


def _to_secret(value: object) -> object:
    from ._secrets import Secret

    return value if isinstance(value, Secret) else Secret(value)


def _at_write_only(
    value: object, schema: JsonValue, replace: Callable[[object], object]
) -> object:
    if not isinstance(schema, dict):
        return value
    if schema.get("writeOnly") is True:
        return replace(value)
    for branch_key in ("oneOf", "anyOf", "allOf"):
        branches = schema.get(branch_key)
        if isinstance(branches, list):
            for branch in branches:
                value = _at_write_only(value, branch, replace)
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        return {
            key: _at_write_only(item, props.get(key, extra), replace)
            for key, item in value.items()
        }
    if isinstance(value, list):
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items")
        return [
            _at_write_only(item, prefix[i] if i < len(prefix) else items, replace)
            for i, item in enumerate(value)
        ]
    return value


def redact_record(record: logging.LogRecord) -> None:
    """Mask secret values in ``record`` in place: message, arguments, traceback, stack.

    A message that held a secret is rendered with its arguments and kept redacted
    (``args`` dropped, so no handler sees the originals). A traceback whose text, or
    the exception's repr, held one is formatted here, redacted, and kept as
    ``exc_text`` with ``exc_info`` dropped (no handler can render the original
    exception, its locals or its arguments); a clean one is left for handlers.
    """
    if not active():
        return
    if not _redact_our_args(record):
        _redact_message(record)
    if record.exc_info and record.exc_info[1] is not None:
        text = record.exc_text or _FORMATTER.formatException(record.exc_info)
        shown = text + repr(record.exc_info[1])
        if redact(shown) != shown:
            record.exc_info, record.exc_text = None, redact(text)
    elif record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def _redact_message(record: logging.LogRecord) -> None:
    """Render the message with its arguments; keep it redacted if it held a secret."""
    try:
        message = record.getMessage()
    except Exception:
        # The handler will report the bad format with msg and args: show neither.
        message = f"{record.msg} {record.args!r}"
    redacted = redact(message)
    if redacted != message:
        record.msg, record.args = redacted, None


def _redact_our_args(record: logging.LogRecord) -> bool:
    """For a record of our own loggers (``trio_mcp.*``) with string arguments, mask
    the arguments and keep the message text: it is ours, never a secret, so a secret
    that happens to be one of its words ("declared") does not mangle the line.
    Returns False (redact the rendered message instead) for anything else."""
    name, args = record.name, record.args
    if not args or not isinstance(name, str) or not name.startswith("trio_mcp"):
        return False
    if name != "trio_mcp" and not name.startswith("trio_mcp."):
        return False
    if isinstance(args, tuple):
        masked = tuple(_masked_arg(arg) for arg in args)
        if any(arg is _OPAQUE for arg in masked):
            return False
        record.args = masked
        return True
    if isinstance(args, dict):
        values = {key: _masked_arg(arg) for key, arg in args.items()}
        if any(arg is _OPAQUE for arg in values.values()):
            return False
        record.args = values
        return True
    return False


#: An argument that is not a string but renders a secret: mask the whole message.
_OPAQUE = object()


def _masked_arg(arg: object) -> object:
    if isinstance(arg, str):
        return redact(arg)
    if isinstance(arg, int | float | bool | None):
        return arg
    shown = f"{arg!s}{arg!r}"
    return arg if redact(shown) == shown else _OPAQUE


class SecretFilter(logging.Filter):
    """Mask secret values in the records of the logger (or handler) it is added to.

    Every record made through ``logging`` is already redacted when it is made (see
    ``install_log_filter``); this filter is for records built another way, such as
    ``logging.makeLogRecord`` from a queue or a socket.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` in place; never drop it."""
        redact_record(record)
        return True


_FORMATTER = logging.Formatter()
_FILTER = SecretFilter()
_seen_loggers = -1
_factory_lock = threading.Lock()


def _install_record_factory() -> None:
    """Make every ``LogRecord`` of the process pass through ``redact_record``.

    ``logging.setLogRecordFactory`` is the one place every logger (the app's, the
    root, a library's, one that does not propagate and has its own handler) and
    every thread creates records, before any filter or handler sees them. The
    factory in place is wrapped, not replaced, and wrapped again if someone later
    installs one that does not chain to ours.
    """
    if getattr(logging.getLogRecordFactory(), "_trio_mcp_redacts", False):
        return  # in place already: the check every call makes, without the lock
    with _factory_lock:
        previous = logging.getLogRecordFactory()
        if getattr(previous, "_trio_mcp_redacts", False):
            return
        logging.setLogRecordFactory(_redacting(previous))


def _redacting(
    previous: Callable[..., logging.LogRecord],
) -> Callable[..., logging.LogRecord]:
    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        redact_record(record)
        return record

    factory._trio_mcp_redacts = True  # type: ignore[attr-defined]
    return factory


def install_log_filter() -> None:
    """Redact every log record of the process; filter the ``trio_mcp`` loggers too.

    Installs the record factory (see ``_install_record_factory``) and attaches
    ``SecretFilter`` to the ``trio_mcp`` logger and each of its children (a
    logger's filters see only records logged on that logger, not those propagated
    from children). Cheap when nothing changed since the last call.
    """
    global _seen_loggers
    _install_record_factory()
    manager = logging.Logger.manager
    if len(manager.loggerDict) == _seen_loggers:
        return
    _seen_loggers = len(manager.loggerDict)
    children = [
        name
        for name, obj in list(manager.loggerDict.items())
        if name.startswith("trio_mcp.") and isinstance(obj, logging.Logger)
    ]
    for name in ["trio_mcp", *children]:
        logging.getLogger(name).addFilter(_FILTER)  # a no-op when it is there
