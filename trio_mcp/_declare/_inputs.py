"""Input requests a handler may ask for (multi round-trip), and the typed responses.

``Elicit`` (form), ``ElicitUrl``, ``Sample`` and ``ListRoots`` are frozen values with
``to_wire()`` (the protocol's ``InputRequest``) and ``client_capability`` (what the
request's client must declare). ``descriptor()`` is what the sealed ``requestState``
remembers of each request, so the retry's responses decode into typed values:
``ElicitResult`` (its ``content`` an instance of the form's attrs class),
``SampleResult`` and a list of ``Root``. No I/O here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import ClassVar, Final, Literal, TypeAlias, final

import attrs

from .. import _checks as checks
from .._decode import decode
from .._errors import DecodeError, InvalidArgument, Problem
from .._json import JsonObject, JsonValue
from .._schema import UnsupportedType, is_model, json_schema
from ._content import PromptMessage

__all__ = [
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "InputRequest",
    "ListRoots",
    "Root",
    "Sample",
    "SampleResult",
    "read_response",
]

_STRING_FORMATS: Final = frozenset({"email", "uri", "date", "date-time"})
_ANNOTATION_KEYS: Final = frozenset({"title", "description", "default"})
_ALLOWED: Final = {
    "string": _ANNOTATION_KEYS | {"type", "format", "minLength", "maxLength"},
    "enum": _ANNOTATION_KEYS | {"type", "enum", "enumNames"},
    "titled": _ANNOTATION_KEYS | {"type", "oneOf"},
    "number": _ANNOTATION_KEYS | {"type", "minimum", "maximum"},
    "boolean": _ANNOTATION_KEYS | {"type"},
    "array": _ANNOTATION_KEYS
    | {"type", "items", "minItems", "maxItems", "uniqueItems"},
}

# Form classes by ``module:qualname``: a sealed state names the class, and the retry
# finds it here (or imports it). Only names this server signed are ever looked up.
_FORMS: dict[str, type] = {}


def _qualified(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _find_form(name: str) -> type:
    found = _FORMS.get(name)
    if found is not None:
        return found
    module, _, qualname = name.partition(":")
    obj: object = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):  # pragma: no cover - we only sign classes
        raise TypeError(f"{name} is not a class")
    return obj


def _property(name: str, schema: JsonObject, where: str) -> JsonObject:
    """Return one ``requestedSchema`` property, or raise naming what is not allowed."""
    schema = dict(schema)
    any_of = schema.pop("anyOf", None)
    if isinstance(any_of, list):
        rest = [s for s in any_of if s != {"type": "null"}]
        if len(rest) != 1 or not isinstance(rest[0], dict):
            raise InvalidArgument(
                f"{where}: field '{name}' is a union; a form field is one flat type"
            )
        schema = {**rest[0], **schema}
    if schema.get("default", 0) is None:
        del schema["default"]
    if schema.get("allOf") == [{"items": {"type": "string"}}]:
        del schema["allOf"]  # the list's own item type, beside titled choices
    if schema.get("writeOnly"):
        raise InvalidArgument(
            f"{where}: field '{name}' is a secret; never request secrets with a form "
            "(use ElicitUrl)"
        )
    kind = schema.get("type")
    if kind == "string" and "enum" in schema:
        shape = "enum"
        if not all(isinstance(v, str) for v in schema["enum"]):  # type: ignore[union-attr]
            raise InvalidArgument(f"{where}: field '{name}' has non-string choices")
        _check_enum_names(name, schema, where)
    elif kind == "string" and "oneOf" in schema:
        shape = "titled"
        _check_titled(name, schema["oneOf"], where)
    elif kind in ("integer", "number"):
        shape = "number"
    elif kind in ("string", "boolean", "array"):
        shape = kind
    else:
        raise InvalidArgument(
            f"{where}: field '{name}' is not a flat form field; use str, int, float, "
            "bool, a Literal or Enum of strings, date/datetime, or a list of string choices"
        )
    extra = sorted(set(schema) - _ALLOWED[shape])
    if extra:
        raise InvalidArgument(
            f"{where}: field '{name}' uses {', '.join(extra)}, which a form cannot express"
        )
    if shape == "string" and schema.get("format", "email") not in _STRING_FORMATS:
        raise InvalidArgument(
            f"{where}: field '{name}' has a string format a form cannot express; "
            f"use one of {', '.join(sorted(_STRING_FORMATS))}"
        )
    if shape == "array":
        items = schema.get("items")
        if isinstance(items, dict) and set(items) == {"anyOf"}:
            _check_titled(name, items["anyOf"], where)
        elif not (
            isinstance(items, dict)
            and set(items) == {"type", "enum"}
            and items["type"] == "string"
        ):
            raise InvalidArgument(
                f"{where}: field '{name}' is a list; a form list is a multi-select "
                "of string choices (list[Literal[...]], or items with anyOf of "
                "titled choices)"
            )
        schema.pop("uniqueItems", None)
    return schema


def _check_enum_names(name: str, schema: JsonObject, where: str) -> None:
    """``enumNames`` (the older titled choices) name each choice once, as strings."""
    names, choices = schema.get("enumNames"), schema["enum"]
    if names is None:
        return
    if not (
        isinstance(names, list)
        and isinstance(choices, list)
        and len(names) == len(choices)
        and all(isinstance(n, str) for n in names)
    ):
        raise InvalidArgument(
            f"{where}: field '{name}' has enumNames that are not one string per choice"
        )


def _check_titled(name: str, choices: JsonValue, where: str) -> None:
    """Titled choices (SEP-1330): a list of ``{"const": str, "title": str}``."""
    if not (
        isinstance(choices, list)
        and choices
        and all(
            isinstance(c, dict)
            and set(c) == {"const", "title"}
            and isinstance(c["const"], str)
            and isinstance(c["title"], str)
            for c in choices
        )
    ):
        raise InvalidArgument(
            f"{where}: field '{name}' has titled choices that are not a list of "
            '{"const": <string>, "title": <string>}'
        )


def form_schema(cls: type) -> JsonObject:
    """Return the elicitation ``requestedSchema`` of an attrs class or pydantic model.

    Raises:
        McpError.InvalidArgument: if ``cls`` is neither, or a field is not a flat
            form field (also a ``TypeError``, what this raised before).
    """
    where = f"Elicit schema {cls.__qualname__}"
    if not (attrs.has(cls) or is_model(cls)):
        raise InvalidArgument(
            f"{where}: the schema must be an attrs class or a pydantic model"
        )
    try:
        schema = json_schema(cls)
    except UnsupportedType as exc:
        raise InvalidArgument(f"{where}: {exc}") from None
    properties = schema.get("properties")
    assert isinstance(properties, dict)
    out: JsonObject = {
        "type": "object",
        "properties": {
            name: _property(name, prop, where)  # type: ignore[arg-type]
            for name, prop in properties.items()
        },
    }
    required = schema.get("required")
    if required:
        out["required"] = required
    return out


@final
@attrs.frozen
class Elicit:
    """Ask the user to fill a form (``elicitation/create`` in form mode).

    ``schema`` is an attrs class or a pydantic model of flat fields (strings, with
    format email, uri, date or date-time; numbers; booleans; string choices). On the
    retry the response is an ``ElicitResult`` whose ``content`` is an instance of
    ``schema`` when accepted.

    Raises:
        McpError.InvalidArgument: at construction, if ``schema`` is not an attrs
            class or has a field a form cannot express (also a ``TypeError``).
    """

    message: str = attrs.field(validator=checks.text)
    schema: type = attrs.field(
        validator=checks.of_type(type, "an attrs class or a pydantic model")
    )
    requested_schema: JsonObject = attrs.field(init=False, eq=False, repr=False)
    client_capability: ClassVar[JsonObject] = {"elicitation": {}}

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "requested_schema", form_schema(self.schema))
        _FORMS[_qualified(self.schema)] = self.schema

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ElicitRequest`` (no id: it is an input request)."""
        return {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": self.message,
                "requestedSchema": self.requested_schema,
            },
        }

    def descriptor(self) -> JsonValue:
        """Return what the sealed state remembers of this request."""
        return ["elicit", _qualified(self.schema)]


@final
@attrs.frozen
class ElicitUrl:
    """Ask the user to open a URL (``elicitation/create`` in URL mode).

    An ``accept`` means the user consented to open it, not that the interaction
    finished; learn the outcome on the retry from your own records.
    """

    message: str = attrs.field(validator=checks.text)
    url: str = attrs.field(validator=checks.text)
    client_capability: ClassVar[JsonObject] = {"elicitation": {"url": {}}}

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ElicitRequest`` in URL mode."""
        return {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": self.message, "url": self.url},
        }

    def descriptor(self) -> JsonValue:
        """Return what the sealed state remembers of this request."""
        return ["elicit_url"]


def _message(item: str | PromptMessage | Mapping[str, JsonValue]) -> JsonObject:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, PromptMessage):
        return item.to_wire()
    if not isinstance(item, Mapping):
        raise checks.invalid(
            "each of Sample.messages", "a str, a PromptMessage or a wire dict", item
        )
    return dict(item)


def _messages(
    value: str
    | PromptMessage
    | Mapping[str, JsonValue]
    | Sequence[str | PromptMessage | Mapping[str, JsonValue]],
) -> tuple[JsonObject, ...]:
    if isinstance(value, str | PromptMessage | Mapping):
        return (_message(value),)
    listed = checks.as_tuple(
        value,
        "Sample.messages",
        "a str, a PromptMessage, a wire dict or a list of them",
    )
    if not listed:
        raise checks.invalid("Sample.messages", "at least one message", value)
    return tuple(_message(m) for m in listed)


def _stop_sequences(value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    listed = checks.as_tuple(value, "Sample.stop_sequences", "a list of str or None")
    for item in listed:
        checks.string(item, "each of Sample.stop_sequences")
    return listed


@final
@attrs.frozen(init=False)
class Sample:
    """Ask the client's model for a completion (``sampling/createMessage``).

    ``messages`` is a str (one user message), a ``PromptMessage``, a wire dict, or a
    list of them. The response is a ``SampleResult``.
    """

    messages: tuple[JsonObject, ...] = attrs.field(converter=_messages)
    max_tokens: int = attrs.field(validator=checks.at_least(1))
    system_prompt: str | None = attrs.field(
        default=None, validator=checks.optional(checks.text)
    )
    temperature: float | None = attrs.field(
        default=None, validator=checks.optional(checks.finite_number)
    )
    stop_sequences: tuple[str, ...] | None = attrs.field(
        default=None, converter=_stop_sequences
    )
    model_preferences: JsonObject | None = attrs.field(
        default=None, validator=checks.optional(checks.mapping)
    )
    metadata: JsonObject | None = attrs.field(
        default=None, validator=checks.optional(checks.mapping)
    )
    client_capability: ClassVar[JsonObject] = {"sampling": {}}

    def __init__(
        self,
        messages: str
        | PromptMessage
        | Mapping[str, JsonValue]
        | Sequence[str | PromptMessage | Mapping[str, JsonValue]],
        max_tokens: int,
        system_prompt: str | None = None,
        *,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: JsonObject | None = None,
        metadata: JsonObject | None = None,
    ) -> None:
        self.__attrs_init__(
            messages=messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            metadata=metadata,
        )

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``CreateMessageRequest``."""
        params: JsonObject = {
            "messages": list(self.messages),
            "maxTokens": self.max_tokens,
        }
        if self.system_prompt is not None:
            params["systemPrompt"] = self.system_prompt
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.stop_sequences is not None:
            params["stopSequences"] = list(self.stop_sequences)
        if self.model_preferences is not None:
            params["modelPreferences"] = self.model_preferences
        if self.metadata is not None:
            params["metadata"] = self.metadata
        return {"method": "sampling/createMessage", "params": params}

    def descriptor(self) -> JsonValue:
        """Return what the sealed state remembers of this request."""
        return ["sample"]


@final
@attrs.frozen
class ListRoots:
    """Ask the client for its roots (``roots/list``); the response is a list of ``Root``."""

    client_capability: ClassVar[JsonObject] = {"roots": {}}

    def to_wire(self) -> JsonObject:
        """Return the protocol's ``ListRootsRequest``."""
        return {"method": "roots/list", "params": {}}

    def descriptor(self) -> JsonValue:
        """Return what the sealed state remembers of this request."""
        return ["roots"]


InputRequest: TypeAlias = Elicit | ElicitUrl | Sample | ListRoots
INPUT_REQUESTS: Final = (Elicit, ElicitUrl, Sample, ListRoots)


@final
@attrs.frozen
class ElicitResult:
    """The user's answer to an elicitation.

    ``content`` is an instance of the form's class when ``action`` is ``"accept"``
    (form mode); otherwise None.
    """

    action: Literal["accept", "decline", "cancel"]
    content: object | None = None

    @property
    def accepted(self) -> bool:
        """Whether the user accepted."""
        return self.action == "accept"


@final
@attrs.frozen
class SampleResult:
    """The client's model's answer to a ``Sample`` request."""

    role: Literal["user", "assistant"]
    content: JsonValue
    """The content block (a wire dict), or a list of blocks."""
    model: str
    stop_reason: str | None = None

    @property
    def text(self) -> str:
        """The text of the content's text blocks, joined with newlines."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "\n".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )


@final
@attrs.frozen
class Root:
    """A root the client offers (usually a ``file://`` URI)."""

    uri: str
    name: str | None = None


def _problem(message: str, path: str = "") -> DecodeError:
    return DecodeError([Problem(path, message)])


def _read_elicit(raw: JsonObject, form: type | None) -> ElicitResult:
    action = raw.get("action")
    if action == "decline":
        return ElicitResult("decline")
    if action == "cancel":
        return ElicitResult("cancel")
    if action != "accept":
        raise _problem("action must be 'accept', 'decline' or 'cancel'", "action")
    if form is None:
        return ElicitResult("accept")
    content = raw.get("content")
    if not isinstance(content, dict):
        raise _problem("an accepted form needs its content (an object)", "content")
    try:
        value: object = decode(form, content)
    except DecodeError as exc:
        raise DecodeError(
            [
                Problem(f"content.{p.path}" if p.path else "content", p.message)
                for p in exc.problems
            ]
        ) from None
    return ElicitResult("accept", value)


def _read_sample(raw: JsonObject) -> SampleResult:
    role, content, model = raw.get("role"), raw.get("content"), raw.get("model")
    problems: list[Problem] = []
    if role not in ("user", "assistant"):
        problems.append(Problem("role", "role must be 'user' or 'assistant'"))
    if not isinstance(content, dict | list):
        problems.append(Problem("content", "content must be a content block or a list"))
    if not isinstance(model, str):
        problems.append(Problem("model", "model must be a string"))
    stop = raw.get("stopReason")
    if stop is not None and not isinstance(stop, str):
        problems.append(Problem("stopReason", "stopReason must be a string"))
    if problems:
        raise DecodeError(problems)
    return SampleResult(role, content, model, stop)  # type: ignore[arg-type]


def _read_roots(raw: JsonObject) -> list[Root]:
    roots = raw.get("roots")
    if not isinstance(roots, list):
        raise _problem("roots must be an array", "roots")
    out: list[Root] = []
    for i, item in enumerate(roots):
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise _problem("a root needs a string uri", f"roots.{i}")
        name = item.get("name")
        out.append(Root(item["uri"], name if isinstance(name, str) else None))  # type: ignore[arg-type]
    return out


def read_response(descriptor: JsonValue, raw: JsonValue) -> object:
    """Decode one input response as the request described by ``descriptor`` expects.

    Raises:
        DecodeError: listing what is wrong with the response.
    """
    if not isinstance(raw, dict):
        raise _problem("an input response must be an object")
    kind = descriptor[0] if isinstance(descriptor, list) and descriptor else None
    if kind == "elicit":
        assert isinstance(descriptor, list)
        return _read_elicit(raw, _find_form(str(descriptor[1])))
    if kind == "elicit_url":
        return _read_elicit(raw, None)
    if kind == "sample":
        return _read_sample(raw)
    if kind == "roots":
        return _read_roots(raw)
    raise _problem(
        "this server does not know the request it answers"
    )  # pragma: no cover
