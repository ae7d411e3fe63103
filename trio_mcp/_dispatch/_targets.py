"""What a call runs and how its reply is shaped, decided by what is called.

Each catalog entry is the target of its calls (``ToolTarget``, ``PromptTarget``,
``ResourceTarget`` are mixed into the entries), and ``Completion`` is the target of
one ``completion/complete``. A target answers three questions for the runner,
which never asks what kind of thing it runs:

- ``answer(call)``: run the handler once (``dispatch`` of the adopter, the
  completer) and return its reply value;
- ``shaped(reply)``: the ``Ending`` of a reply (the protocol result, checked);
- ``failed(failure)``: the ``Ending`` of a failure (a tool shows refusals, bad
  arguments and timeouts as an ``isError`` result the model can read);
- ``masked(result, mask)``: the result with the secrets masked in the strings its
  handler wrote, never in keys or protocol fields (``_mask``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar

from .._authority import reveal_all
from .._declare import (
    ABSENT,
    PromptGet,
    PromptReply,
    PromptSpec,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    ToolCall,
    ToolReply,
    ToolSpec,
    UriTemplate,
    _Absent,
    content_blocks,
    qualified,
)
from .._errors import DecodeError, InvalidReply, Problem, ResourceNotFound
from .._json import JsonObject, JsonValue, dumps
from .._protocol import _wire as wire
from ._call import AnyReply, Call, Ending, ReceiptKind
from ._mask import (
    Mask,
    MaskingFailed,
    PerSchema,
    mask_block,
    mask_blocks,
    mask_contents,
    mask_detail,
    mask_prompt,
    mask_structured,
)
from ._request import ESCAPING_TYPE, Failure

if TYPE_CHECKING:
    from ._catalog import OutputCheck

__all__ = [
    "PromptTarget",
    "ResourceTarget",
    "ToolTarget",
    "error_ending",
    "error_result",
    "prompt_arguments",
    "refuse_escape",
    "text_arguments",
]


def _expect(reply: object, expected: type, declaration: str) -> None:
    if not isinstance(reply, expected):  # an adopter may return anything
        raise InvalidReply(
            declaration,
            f"dispatch() returned a {type(reply).__name__}, not a {expected.__name__}",
        )


def error_ending(failure: Failure) -> Ending:
    """The JSON-RPC error ``failure`` describes, as an ending."""
    error: JsonObject = {"code": failure.code, "message": failure.message}
    if failure.data is not None:
        error["data"] = failure.data
    return Ending(
        outcome=failure.outcome,
        error=error,
        http_status=failure.http_status,
        error_type=failure.error_type,
        error_ref=failure.reference,
    )


def error_result(text: str, detail: JsonValue) -> JsonObject:
    """An ``isError`` ``CallToolResult`` with ``text`` and the detail under ``_meta``."""
    return {
        "content": [{"type": "text", "text": text}],
        "isError": True,
        "_meta": {wire.META_ERROR: detail},
    }


class _EntryTarget:
    """What the three entry targets share: their declaration's rules."""

    __slots__ = ()
    spec: ToolSpec | PromptSpec | ResourceSpec

    @property
    def timeout(self) -> float | None:
        """The declaration's ``timeout=``, the call's deadline."""
        return self.spec.timeout

    def failed(self, failure: Failure) -> Ending:
        """A prompt or read that fails ends with the JSON-RPC error."""
        return error_ending(failure)

    def masked(self, result: JsonObject, mask: Mask) -> JsonObject:
        """Overridden by each target: the result's handler-written strings masked."""
        raise NotImplementedError


#: The problems of a call's arguments against a hand-written input schema.
InputCheck = Callable[[JsonObject], list[Problem]]


def input_check(schema: JsonObject) -> InputCheck:
    """The argument check of a hand-written tool, with ``jsonschema`` (2020-12).

    Each problem names where and which rule, never the value (it may be secret).
    """
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)

    def check(arguments: JsonObject) -> list[Problem]:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        return [
            Problem(".".join(str(p) for p in e.path), _rule_broken(e))
            for e in errors[:10]
        ]

    return check


def _rule_broken(error: object) -> str:
    """What a ``jsonschema`` error says, without the value it is about."""
    rule = getattr(error, "validator", None)
    expected = getattr(error, "validator_value", None)
    if rule == "type":
        return f"must be of type {expected}"
    if rule in ("required", "additionalProperties"):
        return str(getattr(error, "message", rule))  # names keys, not values
    if isinstance(expected, bool | int | float) or (
        isinstance(expected, str) and len(expected) <= 60
    ):
        return f"must satisfy the schema's {rule}: {expected}"
    return f"must satisfy the schema's {rule}"


class ToolTarget(_EntryTarget):
    """A tool: its calls, its ``CallToolResult``, its ``isError`` failures."""

    __slots__ = ()
    kind: ClassVar[ReceiptKind] = "tool"
    declaration: str
    adopter: object
    spec: ToolSpec
    check_output: OutputCheck | None
    check_input: InputCheck | None
    write_only: bool

    async def answer(self, call: Call) -> AnyReply:
        """Run the tool's ``dispatch`` with the call's arguments (secrets revealed),
        once they fit the input schema it publishes (F8: an adopter of ``Tool``
        decodes nothing itself, so nothing else would check them).

        Raises:
            DecodeError: listing every argument that does not fit.
        """
        arguments = reveal_all(call.arguments) if self.write_only else call.arguments
        if self.check_input is not None:
            problems = self.check_input(arguments)  # type: ignore[arg-type]
            if problems:
                raise DecodeError(problems)
        reply = await self.adopter.dispatch(  # type: ignore[attr-defined]
            ToolCall(
                call.name,
                dict(arguments),  # type: ignore[call-overload]
                call.request_id,
                call.principal,
            )
        )
        _expect(reply, ToolReply, self.declaration)
        return reply  # type: ignore[no-any-return]

    def shaped(self, reply: AnyReply) -> Ending:
        """The ``CallToolResult`` of a checked reply."""
        assert isinstance(reply, ToolReply)
        result = self._result(reply)
        if reply.is_error:
            return Ending(outcome="error", result=result, error_type=reply.error_type)
        return Ending(outcome="ok", result=result)

    def failed(self, failure: Failure) -> Ending:
        """Refusals, bad arguments and timeouts are results the model can read."""
        if failure.tool_result:
            result = error_result(failure.message, failure.data)
            return Ending(
                outcome=failure.outcome, result=result, error_type=failure.error_type
            )
        return error_ending(failure)

    def masked(self, result: JsonObject, mask: Mask) -> JsonObject:
        """Content text, structured content (beside the output schema), the error
        detail.

        The structured value is masked once, and a text block that shows it (its
        JSON, or the string itself for ``-> str``) is made from the masked value,
        so the two agree. A masked value is checked against the output schema
        when masking changed it (never otherwise: the handler's value was checked
        already): a secret cannot turn a reply into one that breaks the schema
        (a ``pattern``, a ``format``, ``maxLength``, an ``enum`` the walk does not
        see).

        Raises:
            MaskingFailed: if masking would merge two keys or break the output
                schema (the call is answered "a secret was withheld").
        """
        out = dict(result)
        blocks = out.get("content")
        if "structuredContent" not in out:
            out["content"] = mask_blocks(blocks, mask)
        else:
            structured = out["structuredContent"]
            schema = self.spec.output_schema
            masked = mask_structured(structured, schema, mask)
            if schema is not None and masked != structured:
                broken = masked_check(schema)(masked)
                if broken:
                    raise MaskingFailed(
                        f"break the output schema ({'; '.join(broken)})"
                    )
            out["structuredContent"] = masked
            out["content"] = _shown(blocks, structured, masked, mask)
        if "_meta" in out:
            out["_meta"] = mask_detail(out["_meta"], mask)
        return out

    def _result(self, reply: ToolReply) -> JsonObject:
        blocks: list[JsonValue] = [
            b.to_wire() for b in content_blocks(reply.content, where=self.declaration)
        ]
        if reply.is_error:
            detail: JsonObject = (
                {"kind": "error"} if reply.detail is None else reply.detail
            )
            return {
                "content": blocks,
                "isError": True,
                "_meta": {wire.META_ERROR: detail},
            }
        structured = reply.structured
        if self.spec.output_schema is not None:
            if structured is ABSENT:
                raise InvalidReply(
                    self.declaration,
                    "the tool declares an output schema but the reply has no "
                    "structured content",
                )
            if self.check_output is not None:  # a FunctionTool's was checked already
                self.check_output(structured)  # type: ignore[arg-type]
        result: JsonObject = {"content": blocks}
        if not isinstance(structured, _Absent):
            if not blocks:
                blocks.append({"type": "text", "text": dumps(structured)})
            result["structuredContent"] = structured
        result["isError"] = False
        return result


class PromptTarget(_EntryTarget):
    """A prompt: its arguments checked, its ``GetPromptResult``."""

    __slots__ = ()
    kind: ClassVar[ReceiptKind] = "prompt"
    declaration: str
    adopter: object
    spec: PromptSpec

    async def answer(self, call: Call) -> AnyReply:
        """Check the arguments, then run the prompt's ``dispatch``.

        Checked here, after the grant check, so a refused caller learns nothing
        about the arguments and a bad call still leaves a receipt.
        """
        arguments = prompt_arguments(
            self.spec, getattr(call.arguments, "raw", call.arguments)
        )
        reply = await self.adopter.dispatch(  # type: ignore[attr-defined]
            PromptGet(call.name, arguments, call.request_id, call.principal)
        )
        _expect(reply, PromptReply, self.declaration)
        return reply  # type: ignore[no-any-return]

    def shaped(self, reply: AnyReply) -> Ending:
        """The ``GetPromptResult``."""
        assert isinstance(reply, PromptReply)
        out: JsonObject = {}
        if reply.description:
            out["description"] = reply.description
        out["messages"] = [m.to_wire() for m in reply.messages]
        return Ending(outcome="ok", result=out)

    def masked(self, result: JsonObject, mask: Mask) -> JsonObject:
        """The description and each message's content."""
        return mask_prompt(result, mask)


class ResourceTarget(_EntryTarget):
    """A resource or template: the variables checked, its ``ReadResourceResult``."""

    __slots__ = ()
    kind: ClassVar[ReceiptKind] = "resource"
    declaration: str
    adopter: object
    spec: ResourceSpec
    template: UriTemplate

    async def answer(self, call: Call) -> AnyReply:
        """Refuse a climbing variable, then run the resource's ``dispatch``."""
        uri, variables = call.name, text_arguments(call)
        refuse_escape(self.template, variables, uri)
        try:
            reply = await self.adopter.dispatch(  # type: ignore[attr-defined]
                ResourceRead(uri, variables, call.request_id, call.principal)
            )
        except ResourceNotFound as exc:
            raise Failure.not_found(uri, error_type=qualified(type(exc))) from exc
        _expect(reply, ResourceReply, self.declaration)
        return reply  # type: ignore[no-any-return]

    def shaped(self, reply: AnyReply) -> Ending:
        """The ``ReadResourceResult``: the contents, never cached beyond ``ttl``."""
        assert isinstance(reply, ResourceReply)
        ttl = self.spec.ttl
        return Ending(
            outcome="ok",
            result={
                "contents": [c.to_wire() for c in reply.contents],
                "ttlMs": 0 if ttl is None else round(ttl * 1000),
                "cacheScope": "private",
            },
        )

    def masked(self, result: JsonObject, mask: Mask) -> JsonObject:
        """Each text contents (never a URI, a MIME type or a blob)."""
        return mask_contents(result, mask)


def _shown(
    blocks: JsonValue, structured: JsonValue, masked: JsonValue, mask: Mask
) -> JsonValue:
    """The content blocks of a masked result: a text block that shows the
    structured value (its JSON, or the string itself) shows the masked one; every
    other block is masked on its own."""
    if not isinstance(blocks, list):
        return blocks
    forms = {dumps(structured): dumps(masked)}
    if isinstance(structured, str) and isinstance(masked, str):
        forms[structured] = masked
    out: list[JsonValue] = []
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) else None
        if isinstance(text, str) and block.get("type") == "text" and text in forms:  # type: ignore[union-attr]
            out.append({**block, "text": forms[text]})  # type: ignore[dict-item]
        else:
            out.append(mask_block(block, mask))
    return out


#: A masked value's check, per output schema: the problems it has, by place and
#: keyword (never quoting the value), or none.
MaskedCheck = Callable[[JsonValue], list[str]]


def masked_check(schema: JsonObject) -> MaskedCheck:
    """The check of a masked structured value against ``schema``, formats
    asserted (``asserting_formats``); made once per schema and kept."""
    return _MASKED_CHECKS.get(schema)


def _masked_check(schema: JsonObject) -> MaskedCheck:
    # Imported here, as the check is made (once per schema, when masking changed a
    # structured value): _decode's problems import cattrs, which `import trio_mcp`
    # does not load.
    import jsonschema

    from .._decode._verbatim import asserting_formats

    validator = jsonschema.Draft202012Validator(
        schema, format_checker=asserting_formats()
    )

    def check(value: JsonValue) -> list[str]:
        found = []
        for error in validator.iter_errors(value):
            place = ".".join(str(p) for p in error.absolute_path) or "the value"
            found.append(f"{place}: {error.validator}")
        return sorted(set(found))[:10]

    return check


_MASKED_CHECKS: PerSchema[JsonObject, MaskedCheck] = PerSchema(_masked_check)


def refuse_escape(template: UriTemplate, variables: dict[str, str], uri: str) -> None:
    """Refuse a read whose URI template variable climbs out of its place.

    Raises:
        Failure: -32602 naming the variable and what it holds.
    """
    escape = template.escape(variables)
    if escape is not None:
        name, why = escape
        raise Failure.invalid(
            f"resource URI variable '{name}' holds {why}, which is refused; "
            "name the resource without it",
            {"uri": uri},
            error_type=ESCAPING_TYPE,
        )


def text_arguments(call: Call) -> dict[str, str]:
    """A resource's or completion's arguments: strings by name."""
    return {k: v for k, v in call.arguments.items() if isinstance(v, str)}


def prompt_arguments(spec: PromptSpec, raw: object) -> dict[str, str]:
    """Check ``prompts/get`` arguments against the spec: strings, known, complete.

    Raises:
        DecodeError: listing every problem.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise DecodeError([Problem("", "arguments must be an object of strings")])
    known = {a.name for a in spec.arguments}
    problems = [Problem(k, "unknown argument") for k in raw if k not in known]
    problems += [
        Problem(k, "expected a string")
        for k, v in raw.items()
        if k in known and not isinstance(v, str)
    ]
    problems += [
        Problem(a.name, "this argument is required")
        for a in spec.arguments
        if a.required and a.name not in raw
    ]
    if problems:
        raise DecodeError(problems)
    return {k: v for k, v in raw.items() if isinstance(v, str)}
