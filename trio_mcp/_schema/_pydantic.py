"""pydantic in the type table: models as objects, ``pydantic.Field(...)`` as a Field.

Loaded only when a declaration holds a pydantic type (``is_model`` and
``is_pydantic_field`` look at ``sys.modules`` and type names, never import it), so
``import trio_mcp`` and attrs-only servers never import pydantic.

A model's schema is the model's own (``model_json_schema``, validation mode), made
the way every schema of the table is:

- flat and self-contained: each ``$ref`` into the model's ``$defs`` is replaced by
  the definition (so a model that contains itself is refused, like an attrs
  class), and no ``$defs`` remain;
- closed: an object without ``additionalProperties`` (a model, dataclass or
  TypedDict with pydantic's default ``extra="ignore"``, or ``extra="forbid"``)
  gets ``additionalProperties: false``, and decoding refuses unknown keys instead
  of dropping them. A model with ``extra="allow"`` asks for open objects: its
  ``additionalProperties`` stays as pydantic writes it, and decoding keeps them;
- without generated property titles (``"title": "Query"`` for ``query``); a title
  given with ``Field(title=...)`` and the model's own title stay;
- a ``writeOnly`` value (``trio_mcp.Secret[str]`` inside a model) shows no
  ``default`` or ``examples``; pydantic's ``SecretStr``/``SecretBytes``/``Secret``
  are refused (trio_mcp cannot mask what they hold).
"""

from __future__ import annotations

import copy
import functools
import re
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, get_args, get_origin

from .._authority._secrets import MASK, Secret
from .._errors import install_hint
from ._constraints import Field, Kind, read_extra
from ._inspect import is_model
from ._verbatim import merge_passthrough, passthrough_problem

if TYPE_CHECKING:
    from .._json import JsonObject, JsonValue

__all__ = [
    "FOREIGN_SECRET",
    "Refused",
    "is_pydantic_field",
    "model_schema",
    "read_field_info",
]


class Refused(Exception):
    """Why a model's schema cannot be listed; ``where`` is the path inside it."""

    def __init__(self, what: str, reason: str, where: str = "") -> None:
        self.what = what
        self.reason = reason
        self.where = where
        super().__init__(f"{what}: {reason}")


def is_pydantic_field(item: object) -> bool:
    """Whether ``item`` is what ``pydantic.Field(...)`` returns (a ``FieldInfo``)."""
    kind = type(item)
    return kind.__module__ == "pydantic.fields" and kind.__name__ == "FieldInfo"


# -- pydantic.Field(...) in Annotated -------------------------------------------------
#: FieldInfo attributes read into a trio_mcp Field; any other one that is set is
#: refused by name (an alias or a default would promise what nothing does here).
_READ = frozenset(
    {"description", "title", "examples", "json_schema_extra", "deprecated", "metadata"}
)
#: Set by pydantic itself (``alias_priority`` along with an alias, which is refused).
_INTERNAL = frozenset({"annotation", "alias_priority"})


def read_field_info(item: object, kind: Kind) -> Field | str:
    """``pydantic.Field(...)`` as a trio_mcp ``Field``, or why it cannot be honoured.

    Honoured: ``description``, ``title``, ``examples``, ``deprecated``, a dict
    ``json_schema_extra`` (a passthrough, enforced when it asserts) and the
    constraints (``gt``, ``ge``, ``lt``, ``le``, ``multiple_of``, ``min_length``,
    ``max_length``, ``pattern``). Anything else set (``default``, ``alias``,
    ``strict``, ``discriminator`` ...) is refused by name: the signature gives a
    parameter's default and name, and trio_mcp's decoding is already strict.
    """
    pristine = type(item)()
    for name in type(item).__slots__:  # type: ignore[attr-defined]
        if name.startswith("_") or name in _READ or name in _INTERNAL:
            continue
        if getattr(item, name) != getattr(pristine, name):
            return _refusal(f"{name}=...", _hint(name))
    passthrough: JsonObject = {}
    title = getattr(item, "title", None)
    if title is not None:
        passthrough["title"] = title
    examples = getattr(item, "examples", None)
    if examples is not None:
        passthrough["examples"] = list(examples)
    if getattr(item, "deprecated", None) is not None:
        passthrough["deprecated"] = True
    extra = getattr(item, "json_schema_extra", None)
    if extra is not None and not isinstance(extra, dict):
        return _refusal("json_schema_extra=<a callable>", "give a dict of keywords")
    passthrough.update(copy.deepcopy(extra or {}))
    field = Field(
        description=getattr(item, "description", None),
        json_schema=passthrough or None,
    )
    for extra_item in getattr(item, "metadata", ()):
        read = _read_metadata(extra_item, kind)
        if isinstance(read, str):
            return read
        field = field.merge(read)
    return field


def _read_metadata(item: object, kind: Kind) -> Field | str:
    """One constraint pydantic keeps in ``FieldInfo.metadata``."""
    if type(item).__name__ == "_PydanticGeneralMetadata":
        settings = dict(vars(item))
        pattern = settings.pop("pattern", None)
        if settings:
            return _refusal(f"{sorted(settings)[0]}=...", _hint(sorted(settings)[0]))
        if not isinstance(pattern, str):
            return _refusal("pattern=<a compiled pattern>", "give the pattern as str")
        return Field(pattern=pattern)
    read = read_extra(item, kind)
    if isinstance(read, str) and type(item).__module__ == "pydantic.types":
        # Strict(), AllowInfNan() ...: settings of pydantic's own validation.
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", type(item).__name__).lower()
        return _refusal(f"{name}=...", _hint(name))
    return read


def _hint(name: str) -> str:
    if name in ("default", "default_factory"):
        return "give the default in the signature (`limit: Annotated[int, Field(ge=1)] = 20`)"
    if name in ("alias", "validation_alias", "serialization_alias", "alias_priority"):
        return "a parameter's key is its name; rename the parameter"
    if name == "strict":
        return "trio_mcp's decoding is strict already; leave it out"
    return "leave it out, or use a pydantic model, where pydantic applies it"


def _refusal(setting: str, hint: str) -> str:
    return f"pydantic.Field({setting}) cannot be honoured here: {hint}"


# -- models ------------------------------------------------------------------------------
#: The message for pydantic's own secret types inside a model.
FOREIGN_SECRET = (
    "use trio_mcp.Secret[str]: trio_mcp masks it in replies, errors, logs and "
    "receipts, and knows nothing of what pydantic's secret types hold"
)
#: Keywords whose value is one subschema, a list of them, or a map of them.
_ONE = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"properties", "patternProperties", "dependentSchemas"})
_REF = "#/$defs/"


@functools.cache
def _generator() -> type:
    """pydantic's generator without property titles made from field names, and
    with a ``Secret`` default as the mask (which the write-only rule then drops)."""
    from pydantic.json_schema import GenerateJsonSchema

    class Untitled(GenerateJsonSchema):
        def field_title_should_be_set(self, schema: object) -> bool:
            del schema
            return False

        def encode_default(self, dft: object) -> object:
            if isinstance(dft, Secret):
                return MASK
            return super().encode_default(dft)

    return Untitled


def model_schema(cls: type) -> JsonObject:
    """The listed schema of a model (see the module docstring).

    Raises:
        Refused: naming the place inside the model, when pydantic cannot give a
            schema, the model contains itself, holds a pydantic secret type, or
            brings a ``$ref`` that is not into its own ``$defs``.
    """
    old = _too_old()
    if old is not None:
        raise Refused(cls.__name__, old)
    foreign = next(_secret_types(cls, "", set()), None)
    if foreign is not None:
        raise Refused(foreign[1], FOREIGN_SECRET, foreign[0])
    try:
        raw = cls.model_json_schema(  # type: ignore[attr-defined]
            mode="validation", schema_generator=_generator()
        )
    except Exception as exc:  # PydanticUserError, PydanticInvalidForJsonSchema ...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise Refused(
            cls.__name__, f"pydantic cannot give its JSON Schema ({first})"
        ) from None
    defs = raw.pop("$defs", {})
    return _Inliner(defs).node(raw, "", ())


#: The oldest pydantic whose serializer leaves computed fields out on request.
OLDEST = (2, 12)


def _too_old() -> str | None:
    """Why the installed pydantic cannot serve models here, or None."""
    import pydantic

    version = str(pydantic.VERSION)
    parts = [
        int("".join(c for c in p if c.isdigit()) or 0) for p in version.split(".")[:2]
    ]
    if tuple(parts) >= OLDEST:
        return None
    return (
        f"pydantic {version} is installed; trio_mcp needs pydantic "
        f"{'.'.join(map(str, OLDEST))} or newer ({install_hint('pydantic')})"
    )


class _Inliner:
    """Replaces ``$ref`` by definitions, closing objects on the way."""

    def __init__(self, defs: JsonObject) -> None:
        self.defs = defs

    def node(self, node: JsonValue, where: str, seen: tuple[str, ...]) -> JsonObject:
        if not isinstance(node, dict):
            return node  # type: ignore[return-value]  # a boolean schema
        out: JsonObject = {}
        for key, value in node.items():
            if key == "$ref":
                continue
            if key in _ONE:
                out[key] = self.node(value, _join(where, key), seen)
            elif key in _MANY and isinstance(value, list):
                out[key] = [self.node(v, where, seen) for v in value]
            elif key in _MAP and isinstance(value, dict):
                out[key] = {
                    k: self.node(v, _join(where, k), seen) for k, v in value.items()
                }
            elif key == "discriminator" and isinstance(value, dict):
                # OpenAPI's hint; its mapping names $defs that are inlined away.
                out[key] = {k: v for k, v in value.items() if k != "mapping"}
            else:
                out[key] = copy.deepcopy(value)
        ref = node.get("$ref")
        if ref is not None:
            out = self.resolve(ref, out, where, seen)
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        if out.get("writeOnly") is True:
            out.pop("default", None)
            out.pop("examples", None)
        return out

    def resolve(
        self, ref: JsonValue, siblings: JsonObject, where: str, seen: tuple[str, ...]
    ) -> JsonObject:
        if not isinstance(ref, str) or not ref.startswith(_REF):
            raise Refused(
                f"$ref {ref!r}",
                "schemas are self-contained; only the model's own $defs are inlined",
                where,
            )
        name = ref[len(_REF) :]
        target = self.defs.get(name)
        if target is None:
            raise Refused(
                f"$ref {ref!r}", "it names no entry of the model's $defs", where
            )
        if name in seen:
            raise Refused(
                name,
                "schemas are flat and self-contained, so a class cannot contain "
                "itself; use an id (str) to refer to another item",
                where,
            )
        out = self.node(target, where, (*seen, name))
        if siblings:
            problem = passthrough_problem(siblings)
            if problem is not None:  # pragma: no cover - pydantic writes no such
                raise Refused(f"$ref {ref!r}", problem, where)
            merge_passthrough(out, siblings)
        return out


def _join(where: str, part: str) -> str:
    return f"{where}.{part}" if where else part


def _secret_types(tp: object, where: str, seen: set[int]) -> Iterator[tuple[str, str]]:
    """(path, type name) of each pydantic secret type inside a model's fields."""
    if id(tp) in seen:
        return
    seen.add(id(tp))
    if get_origin(tp) is Annotated:
        yield from _secret_types(get_args(tp)[0], where, seen)
        return
    if _is_foreign_secret(tp):
        name = getattr(get_origin(tp) or tp, "__name__", repr(tp))
        yield where, f"pydantic.{name}"
        return
    for arg in get_args(tp):
        yield from _secret_types(arg, where, seen)
    for name, inner in _fields_of(tp):
        yield from _secret_types(inner, _join(where, name), seen)


def _is_foreign_secret(tp: object) -> bool:
    """``pydantic.SecretStr``, ``SecretBytes`` or ``Secret[...]``."""
    cls = get_origin(tp) or tp
    return isinstance(cls, type) and any(
        c.__module__ == "pydantic.types" and c.__name__ == "_SecretBase"
        for c in cls.__mro__
    )


def _fields_of(tp: object) -> list[tuple[str, object]]:
    """The field types of a model, a dataclass or a TypedDict (else none)."""
    if is_model(tp):
        fields = tp.model_fields  # type: ignore[attr-defined]
        return [(name, info.annotation) for name, info in fields.items()]
    if isinstance(tp, type) and (
        hasattr(tp, "__dataclass_fields__") or typing.is_typeddict(tp)
    ):
        try:
            return list(typing.get_type_hints(tp, include_extras=True).items())
        except Exception:  # pydantic refuses it when it builds the schema
            return []
    return []
