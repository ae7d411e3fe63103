"""A ``SKILL.md``'s YAML frontmatter, read so that every host reads the same values.

SEP-2640 sends the frontmatter in each skill entry "rendered verbatim as a JSON
object", and a host compares it field by field with what it parses from the file:
any difference and the skill is not loaded. Hosts parse with different YAML
libraries, and YAML 1.1 (PyYAML's ``safe_load``) and YAML 1.2 (the JavaScript
``yaml`` package, most other parsers) read some plain scalars differently:
``yes`` is true or a string, ``017`` is 15 or 17, ``2026-01-01`` is a date or a
string. So the frontmatter is read with the YAML 1.2 core schema (JSON values
only) and compared with PyYAML's own YAML 1.1 reading; a value the two read
differently is refused with the key to quote. Duplicate keys, keys that are not
strings and NaN or infinity (not JSON) are refused too.

Before any Python value is built, the YAML's events are scanned: anchors and
aliases are refused (an alias bomb of a few hundred bytes expands to billions of
values, and the frontmatter is sent verbatim in every ``skills/list``), and the
frontmatter is bounded in bytes, values and nesting depth.

PyYAML is imported when a skill is loaded, never by ``import trio_mcp``.
"""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING, Any

from .._errors import install_hint
from .._json import JsonObject, JsonValue

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_FRONTMATTER_DEPTH",
    "MAX_FRONTMATTER_VALUES",
    "BadFrontmatter",
    "parse_frontmatter",
    "split_frontmatter",
]

#: The frontmatter's largest size in UTF-8 bytes (64 KiB).
MAX_FRONTMATTER_BYTES = 65536
#: The most values (scalars, lists and mappings, keys included) it may hold.
MAX_FRONTMATTER_VALUES = 1000
#: How deeply its lists and mappings may nest.
MAX_FRONTMATTER_DEPTH = 32

#: The block the conformance suite and hosts look for: ``---`` on the first line,
#: the YAML, then ``---`` on a line of its own.
_BLOCK = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)

# The YAML 1.2 core schema's plain scalars (YAML 1.2.2, section 10.3.2).
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


class BadFrontmatter(ValueError):
    """The frontmatter is missing, not YAML, or not one JSON object every host reads alike."""


def split_frontmatter(text: str) -> str:
    """Return the YAML between the leading ``---`` lines of a ``SKILL.md``.

    Raises:
        BadFrontmatter: if the file does not begin with such a block.
    """
    match = _BLOCK.match(text.removeprefix("\ufeff"))
    if match is None:
        raise BadFrontmatter(
            "does not begin with YAML frontmatter: put '---' on the first line, "
            "then 'name:' and 'description:', then '---' on a line of its own"
        )
    return match.group(1)


def parse_frontmatter(source: str) -> JsonObject:
    """Parse frontmatter YAML into the JSON object sent in skill entries.

    Raises:
        BadFrontmatter: naming the problem (and the key, where there is one).
    """
    try:
        import yaml
    except ImportError:
        raise BadFrontmatter(
            f"cannot be read: serving skills needs PyYAML; {install_hint('skills')}"
        ) from None
    size = len(source.encode("utf-8"))
    if size > MAX_FRONTMATTER_BYTES:
        raise BadFrontmatter(
            f"its frontmatter has {size} bytes; at most {MAX_FRONTMATTER_BYTES} "
            "(it is sent in every skills/list): move long text into the body"
        )
    try:
        _check_events(yaml, source)
        core = yaml.load(source, Loader=_core_loader())
        legacy = yaml.load(source, Loader=_legacy_loader())
    except yaml.YAMLError as exc:
        raise BadFrontmatter(f"its frontmatter is not valid YAML: {exc}") from None
    if not isinstance(core, dict):
        raise BadFrontmatter(
            "its frontmatter must be a mapping of keys to values (name: ..., "
            f"description: ...), not {type(core).__name__}"
        )
    _check_json(core, "")
    where = _first_difference(core, legacy, "")
    if where is not None:
        raise BadFrontmatter(
            f"frontmatter value at '{where}' reads differently in YAML 1.1 and "
            "YAML 1.2 (hosts use both, and must read the same value): quote it"
        )
    return core


def _check_events(yaml: Any, source: str) -> None:
    """Refuse anchors, aliases, too many values or too deep a nesting, from the
    parser's events alone (linear in the text; no value is built)."""
    values = 0
    depth = 0
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise BadFrontmatter(
                "its frontmatter uses YAML anchors and aliases (&name, *name), "
                "which are refused (one alias can expand to billions of values): "
                "write each value out"
            )
        if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent):
            values += 1
            if values > MAX_FRONTMATTER_VALUES:
                raise BadFrontmatter(
                    "its frontmatter holds more than "
                    f"{MAX_FRONTMATTER_VALUES} values (keys included)"
                )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_FRONTMATTER_DEPTH:
                raise BadFrontmatter(
                    "its frontmatter nests lists and mappings more than "
                    f"{MAX_FRONTMATTER_DEPTH} deep"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_json(value: object, path: str) -> None:
    """Refuse what JSON cannot carry: non-string keys, NaN and infinities."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise BadFrontmatter(
                    f"frontmatter key {key!r} at '{path or '<top>'}' is not a string; "
                    "quote it"
                )
            _check_json(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{path}[{index}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise BadFrontmatter(
            f"frontmatter value at '{path}' is {value}, which JSON cannot carry"
        )


def _first_difference(core: object, legacy: object, path: str) -> str | None:
    """Where two readings differ (by type, not only ``==``), or None."""
    if type(core) is not type(legacy):
        return path or "<top>"
    if isinstance(core, dict):
        assert isinstance(legacy, dict)
        if list(core) != list(legacy):
            return path or "<top>"
        for key in core:
            found = _first_difference(
                core[key], legacy[key], f"{path}.{key}" if path else str(key)
            )
            if found is not None:
                return found
        return None
    if isinstance(core, list):
        assert isinstance(legacy, list)
        if len(core) != len(legacy):
            return path
        for index, (a, b) in enumerate(zip(core, legacy, strict=True)):
            found = _first_difference(a, b, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    return None if core == legacy else path


def _no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> None:
    seen: set[object] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, list | dict):
            continue  # not hashable; refused later as a key that is not a string
        if key in seen:
            raise BadFrontmatter(
                f"frontmatter key {key!r} appears twice; YAML parsers disagree on "
                "which value wins, so keep one"
            )
        seen.add(key)


def _strict_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    _no_duplicates(loader, node)
    return loader.construct_mapping(node, deep=True)


def _core_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)


def _core_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    text = str(loader.construct_scalar(node)).lower()
    if text.endswith(".inf"):
        return -math.inf if text.startswith("-") else math.inf
    return math.nan if text == ".nan" else float(text)


@functools.cache
def _legacy_loader() -> type[yaml.SafeLoader]:
    """PyYAML's ``SafeLoader`` (YAML 1.1), refusing duplicate keys."""
    import yaml

    class Legacy(yaml.SafeLoader):
        pass

    Legacy.add_constructor("tag:yaml.org,2002:map", _strict_mapping)
    return Legacy


@functools.cache
def _core_loader() -> type[yaml.SafeLoader]:
    """A ``SafeLoader`` that resolves plain scalars by the YAML 1.2 core schema."""
    import yaml

    class Core(yaml.SafeLoader):
        pass

    # PyYAML copies the parent's resolvers on the first add unless the class has
    # its own table: start from an empty one (no YAML 1.1 resolvers).
    Core.yaml_implicit_resolvers = {}

    for tag, pattern, first in (
        ("null", _NULL, ["~", "n", "N", ""]),
        ("bool", _BOOL, list("tTfF")),
        ("int", _INT, list("-+0123456789")),
        ("float", _FLOAT, list("-+.0123456789")),
    ):
        Core.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", pattern, first)
    Core.add_constructor("tag:yaml.org,2002:map", _strict_mapping)
    Core.add_constructor("tag:yaml.org,2002:int", _core_int)
    Core.add_constructor("tag:yaml.org,2002:float", _core_float)
    for tag in ("timestamp", "binary", "set", "omap", "pairs", "merge"):
        Core.add_constructor(f"tag:yaml.org,2002:{tag}", _not_json)
    return Core


def _not_json(loader: yaml.SafeLoader, node: yaml.Node) -> JsonValue:
    raise BadFrontmatter(
        f"frontmatter uses the YAML tag {node.tag}, which has no JSON value; "
        "write a plain string, number, boolean, list or mapping"
    )
