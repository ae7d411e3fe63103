"""``completion/complete``: the completers declared with ``complete=``, and their checks.

A completer belongs to a prompt argument or a resource template variable and lives
on the spec (``PromptSpec.complete``, ``ResourceSpec.complete``), so hand-written
adopters offer completions exactly as decorated functions do. It gets the value
typed so far and the other arguments already filled in (``context.arguments``),
and answers any iterable of strings; at most ``MAX_VALUES`` are sent, with
``total`` and ``hasMore``.

A completion is a call like any other (``Completion`` is its target): the same
runner gives it the declaration's grants and ``timeout=`` (a caller who may not get
the prompt or read the resource learns nothing from its completions; a slow
completer is cut off like a slow handler), its context, middleware, masking and a
receipt (kind ``completion``). Sync completers run in a worker thread like sync
handlers. One that fails, or answers something that is not strings, ends that
request with -32603; the server goes on.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import logging
from collections.abc import Iterable, Sized
from typing import TYPE_CHECKING, ClassVar

import attrs
import trio

from .._declare import Completer, PromptSpec, ResourceSpec, UriTemplate
from .._declare._base import worker_threads
from .._errors import InvalidReply
from .._json import JsonObject, JsonValue
from ._call import AnyReply, Call, Ending, ReceiptKind
from ._mask import Mask, mask_completion
from ._request import Checked, Failure
from ._targets import error_ending, text_arguments

if TYPE_CHECKING:
    from ._catalog import Catalog, Entry

__all__ = [
    "MAX_VALUES",
    "Completion",
    "completable",
    "completion_call",
    "completion_problems",
]

log = logging.getLogger("trio_mcp")

#: Most values one ``completion/complete`` result carries (the revision's bound).
MAX_VALUES = 100


def completion_problems(spec: PromptSpec | ResourceSpec, where: str) -> list[str]:
    """What is wrong with a spec's ``complete=``: keys that name no parameter, or
    values that are not callable."""
    if isinstance(spec, PromptSpec):
        known = [a.name for a in spec.arguments]
        what, kind = f"prompt '{spec.name}' ({where})", ("an argument", "arguments")
    else:
        try:
            known = list(UriTemplate.parse(spec.uri, where=where).variables)
        except Exception:  # the template's own problem is reported elsewhere
            known = []
        what, kind = (
            f"resource '{spec.uri}' ({where})",
            ("a template variable", "template variables"),
        )
    found = []
    completers: dict[str, object] = dict(spec.complete)
    for key, fn in completers.items():
        if key not in known:
            names = ", ".join(f"'{k}'" for k in known) or "none"
            found.append(
                f"{what}: complete= names '{key}', which is not {kind[0]} "
                f"(its {kind[1]}: {names}); fix the key"
            )
        elif not callable(fn):
            found.append(
                f"{what}: complete['{key}'] is not callable; give a function "
                "fn(value, context) returning strings"
            )
    return found


@attrs.frozen(eq=False)
class _Completed:
    """A completer's values, collected: the reply value of a completion."""

    values: list[str]
    total: int | None
    has_more: bool
    needs: None = None


@attrs.frozen(eq=False)
class Completion:
    """The target of one ``completion/complete``: a completer of ``entry``."""

    kind: ClassVar[ReceiptKind] = "completion"
    entry: Entry
    argument: str
    """The argument (or template variable) being completed."""
    completer: Completer | None

    @property
    def declaration(self) -> str:
        """The declaration whose argument is completed."""
        return self.entry.declaration

    @property
    def required(self) -> frozenset[str]:
        """The declaration's capabilities: completing needs what calling needs."""
        return self.entry.required

    @property
    def timeout(self) -> float | None:
        """The declaration's ``timeout=``."""
        return self.entry.spec.timeout

    @property
    def upstream(self) -> str | None:
        """The upstream that answers the declaration, if another server does."""
        return self.entry.upstream

    @property
    def spec(self) -> PromptSpec | ResourceSpec:
        """The spec of the declaration whose argument is completed."""
        spec = self.entry.spec
        assert isinstance(spec, PromptSpec | ResourceSpec)
        return spec

    async def answer(self, call: Call) -> AnyReply:
        """Run the completer on the value typed so far and the other arguments."""
        if self.completer is None:
            return _Completed([], 0, False)
        arguments = text_arguments(call)
        value = arguments.pop(self.argument)
        return _Completed(*await _run(self.completer, value, arguments))

    def shaped(self, reply: AnyReply) -> Ending:
        """The ``CompleteResult``."""
        assert isinstance(reply, _Completed)
        return Ending(
            outcome="ok", result=_result(reply.values, reply.total, reply.has_more)
        )

    def failed(self, failure: Failure) -> Ending:
        """A completion that fails ends with the JSON-RPC error."""
        return error_ending(failure)

    def masked(self, result: JsonObject, mask: Mask) -> JsonObject:
        """Each offered value."""
        return mask_completion(result, mask)


def completion_call(
    catalog: Catalog, request: Checked
) -> tuple[Completion, str, dict[str, str]]:
    """The target of a ``completion/complete``, its wire name and its arguments
    (the value typed so far under the argument's name, then the context).

    Raises:
        Failure: -32602 for a ref, argument or context that names nothing served.
    """
    name, value = _argument(request.params)
    entry, known = _find(catalog, request.params.get("ref"))
    if name not in known:
        raise Failure.invalid(
            f"'{name}' is not an argument of this reference; it has: "
            + (", ".join(known) or "none")
        )
    spec = entry.spec
    assert isinstance(spec, PromptSpec | ResourceSpec)
    arguments = {name: value, **_context(request.params, name, known)}
    return Completion(entry, name, spec.complete.get(name)), entry.name, arguments


def _argument(params: JsonObject) -> tuple[str, str]:
    argument = params.get("argument")
    if not isinstance(params.get("ref"), dict) or not isinstance(argument, dict):
        raise Failure.invalid("completion/complete needs 'ref' and 'argument' objects")
    name, value = argument.get("name"), argument.get("value")
    if not isinstance(name, str) or not isinstance(value, str):
        raise Failure.invalid("argument needs string 'name' and 'value'")
    return name, value


def _find(catalog: Catalog, ref: JsonValue) -> tuple[Entry, list[str]]:
    """The entry a ``ref`` names, and the names its completions may be asked for."""
    assert isinstance(ref, dict)
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = ref.get("name")
        prompt = catalog.prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise Failure.invalid(f"unknown prompt {ref.get('name')!r}")
        return prompt, [a.name for a in prompt.spec.arguments]
    if kind == "ref/resource":
        uri = ref.get("uri")
        for resource in catalog.resources:
            if resource.spec.uri == uri:
                return resource, list(resource.template.variables)
        raise Failure.invalid("unknown resource or template URI", {"uri": uri})
    raise Failure.invalid("ref.type must be 'ref/prompt' or 'ref/resource'")


def _context(params: JsonObject, name: str, known: list[str]) -> dict[str, str]:
    """``context.arguments`` without the completed one, or -32602 if malformed."""
    context = params.get("context")
    if context is None:
        return {}
    arguments = context.get("arguments") if isinstance(context, dict) else None
    if arguments is None and isinstance(context, dict):
        return {}
    if not isinstance(arguments, dict) or not all(
        isinstance(v, str) for v in arguments.values()
    ):
        raise Failure.invalid("context.arguments must be an object of strings")
    return {
        k: v
        for k, v in arguments.items()
        if k != name and k in known and isinstance(v, str)
    }


async def _run(
    completer: Completer, value: str, context: dict[str, str]
) -> tuple[list[str], int | None, bool]:
    """Call the completer (a sync one in a worker thread) and collect its values."""
    if inspect.iscoroutinefunction(completer) or inspect.iscoroutinefunction(
        getattr(completer, "__call__", None)  # noqa: B004 - async callable objects
    ):
        answer = await completer(value, context)  # type: ignore[misc]
        return _collect(answer)
    return await trio.to_thread.run_sync(
        functools.partial(_call_and_collect, completer, value, context),
        abandon_on_cancel=True,
        limiter=worker_threads(),
    )


def _call_and_collect(
    completer: Completer, value: str, context: dict[str, str]
) -> tuple[list[str], int | None, bool]:
    # In the worker thread: a generator's body runs here too, never in Trio's.
    return _collect(completer(value, context))


def _collect(answer: object) -> tuple[list[str], int | None, bool]:
    """The first ``MAX_VALUES`` strings, the total when it is known, and ``hasMore``.

    A sized answer (a list, a tuple, a set) gives its exact total; any other
    iterable is read one value past the bound, and its total is sent only when
    it ended within the bound.

    Raises:
        InvalidReply: for a string (an iterable of characters, almost surely a
            mistake) or anything that is not an iterable of strings.
    """
    if isinstance(answer, str | bytes) or not isinstance(answer, Iterable):
        raise InvalidReply(
            "completer",
            f"returned a {type(answer).__name__}; return an iterable of strings "
            "(for example a list)",
        )
    taken = list(itertools.islice(answer, MAX_VALUES + 1))
    for item in taken:
        if not isinstance(item, str):
            raise InvalidReply(
                "completer",
                f"offered a {type(item).__name__}; completion values are strings",
            )
    has_more = len(taken) > MAX_VALUES
    if isinstance(answer, Sized):
        return taken[:MAX_VALUES], len(answer), has_more
    return taken[:MAX_VALUES], None if has_more else len(taken), has_more


def _result(values: list[str], total: int | None, has_more: bool) -> JsonObject:
    completion: JsonObject = {"values": list(values)}
    if total is not None:
        completion["total"] = total
    completion["hasMore"] = has_more
    return {"completion": completion}


def completable(catalog: Catalog) -> bool:
    """Whether any prompt or resource has a completer (then ``completions`` is
    advertised)."""
    return any(e.spec.complete for e in catalog.prompts.values()) or any(
        e.spec.complete for e in catalog.resources
    )
