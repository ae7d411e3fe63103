"""The catalog: what a server serves, validated together, in list order.

A server list holds any adopter of ``Tool``, ``Resource`` or ``Prompt`` (decorated
functions and bound methods, or hand-written objects); each is asked for its spec
once, here, and the spec is validated like any other. Validation gathers every
problem at once, so an author fixes them in one pass.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, TypeVar

import attrs

from .._authority import closure
from .._declare import (
    Declaration,
    FunctionPrompt,
    FunctionResource,
    FunctionTool,
    Prompt,
    PromptSpec,
    Resource,
    ResourceSpec,
    Tool,
    ToolSpec,
    UriTemplate,
)
from .._declare._overlap import overlapping
from .._declare._signature import holds_write_only
from .._errors import DuplicateName, InvalidDeclaration, InvalidReply
from .._json import JsonObject, JsonValue
from .._protocol._headers import ParamHeader, param_headers
from ._call import ReceiptKind
from ._complete import completion_problems
from ._pages import Pages
from ._targets import InputCheck, PromptTarget, ResourceTarget, ToolTarget, input_check
from ._views import ViewResource, served_views

__all__ = [
    "Catalog",
    "Entry",
    "OutputCheck",
    "PromptEntry",
    "ResourceEntry",
    "ToolEntry",
]

log = logging.getLogger("trio_mcp")

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

#: Checks a tool's structured content against its output schema; raises InvalidReply.
OutputCheck = Callable[[JsonValue], None]


@attrs.frozen(kw_only=True, eq=False)
class Entry:
    """One served object and its spec (asked once): what the server calls it by."""

    kind: ClassVar[ReceiptKind]
    declaration: str
    """``module:qualname`` of the function, or of the adopter's class."""
    spec: ToolSpec | ResourceSpec | PromptSpec
    required: frozenset[str] = attrs.field(init=False, default=frozenset())
    """Every capability a call needs: the spec's ``caps`` and what they require."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "required", closure(self.spec.caps))

    @property
    def name(self) -> str:
        """The wire name (a resource's URI or URI template)."""
        spec = self.spec
        return spec.uri if isinstance(spec, ResourceSpec) else spec.name

    @property
    def upstream(self) -> str | None:
        """The upstream that answers it (a gateway's relayed entries), else None."""
        return None

    def to_wire(self) -> JsonObject:
        """How ``tools/list`` (``prompts/list``, ...) shows it."""
        return self.spec.to_wire()


@attrs.frozen(kw_only=True, eq=False)
class ToolEntry(Entry, ToolTarget):
    """A served tool."""

    adopter: Tool
    spec: ToolSpec
    check_output: OutputCheck | None = None
    """Checks structured content when the tool has an output schema."""
    check_input: InputCheck | None = None
    """Checks the arguments of a hand-written tool against its input schema."""
    param_headers: list[ParamHeader] = attrs.field(factory=list)
    """Its ``x-mcp-header`` parameters."""
    write_only: bool = attrs.field(
        default=attrs.Factory(
            lambda self: holds_write_only(self.spec.input_schema), takes_self=True
        )
    )
    """Whether an argument may be a ``Secret`` (its input schema has ``writeOnly``)."""


@attrs.frozen(kw_only=True, eq=False)
class ResourceEntry(Entry, ResourceTarget):
    """A served resource or resource template."""

    adopter: Resource
    spec: ResourceSpec
    template: UriTemplate
    """The parsed URI (template) that ``resources/read`` matches."""


@attrs.frozen(kw_only=True, eq=False)
class PromptEntry(Entry, PromptTarget):
    """A served prompt."""

    adopter: Prompt
    spec: PromptSpec


def _declaration_of(adopter: object) -> str:
    declaration = getattr(adopter, "declaration", None)
    if isinstance(declaration, str):
        return declaration
    cls = type(adopter)
    return f"{cls.__module__}:{cls.__qualname__}"


def _spec_of(
    adopter: object, protocol: type, spec_type: type, label: str
) -> tuple[object | None, list[str]]:
    """Ask an adopter for its spec; return it or the problems that prevent it."""
    kind = protocol.__name__
    # A decorated declaration has spec() and dispatch() by its class; Python 3.11
    # re-reads a runtime-checkable protocol's members on every isinstance check,
    # which was a third of building a 1,000-tool Server.
    if not isinstance(adopter, (Declaration, protocol)):
        return None, [
            f"{label}= takes {kind} objects, got {adopter!r}; decorate it with "
            f"@{kind.lower()}, or give it spec() and async dispatch()"
        ]
    problems: list[str] = []
    prepare = getattr(adopter, "ensure_prepared", None)
    if prepare is not None:
        try:
            prepare()
        except InvalidDeclaration as exc:
            return None, list(exc.problems)
        problems.extend(adopter.problems())  # type: ignore[attr-defined]
    try:
        spec = adopter.spec()  # type: ignore[attr-defined]
    except Exception as exc:
        return None, [f"{_declaration_of(adopter)}: spec() failed: {exc!r}"]
    if not isinstance(spec, spec_type):
        return None, [
            f"{label}= takes {kind} objects whose spec() returns a "
            f"{spec_type.__name__}; {_declaration_of(adopter)} returned {spec!r}"
        ]
    return spec, problems


def _check_tool_spec(spec: ToolSpec, where: str) -> list[str]:
    found = []
    if not _NAME.fullmatch(spec.name):
        found.append(
            f"{where}: the name must be 1-128 letters, digits, '_', '.' or '-'"
        )
    if not spec.description:
        found.append(f"{where}: has no description; say what the tool does")
    if spec.input_schema.get("type") != "object":
        found.append(
            f"{where}: the input schema must be a JSON Schema object with "
            "'type': 'object' (arguments are an object)"
        )
    # The output schema may be any JSON Schema 2020-12, as a decorated ``-> int``'s is.
    for label, schema in (("input", spec.input_schema), ("output", spec.output_schema)):
        problem = None if schema is None else _schema_problem(schema)
        if problem is not None:
            found.append(
                f"{where}: the {label} schema is not a valid JSON Schema 2020-12: "
                f"{problem}"
            )
    return found


def _schema_problem(schema: JsonObject) -> str | None:
    """What makes ``schema`` invalid against the 2020-12 metaschema, if anything."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None


def _tool_entry(adopter: Tool, spec: ToolSpec) -> tuple[ToolEntry, list[str]]:
    where = _declaration_of(adopter)
    if isinstance(adopter, FunctionTool):  # it reports its own problems
        # Its replies are checked by construction (FunctionTool.dispatch encodes
        # through the declared type and decodes back): no second check here.
        entry = ToolEntry(
            declaration=where,
            spec=spec,
            adopter=adopter,
            param_headers=adopter.param_headers,
            write_only=adopter.holds_secrets,  # read from the same input schema
        )
        return entry, []
    headers, header_problems = param_headers(spec.input_schema)
    problems = [
        f"tool '{spec.name}' ({where}): {p}"
        for p in [*_check_tool_spec(spec, where), *header_problems]
    ]
    entry = ToolEntry(
        declaration=where,
        spec=spec,
        adopter=adopter,
        check_output=None
        if spec.output_schema is None
        else schema_check(spec.output_schema, where),
        check_input=None if problems else input_check(spec.input_schema),
        param_headers=headers,
    )
    return entry, problems


def schema_check(schema: JsonObject, where: str) -> OutputCheck:
    """An output check for a hand-written schema, with ``jsonschema`` (2020-12)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)

    def check(value: JsonValue) -> None:
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            raise InvalidReply(
                where,
                [
                    f"{'.'.join(str(p) for p in e.path) or 'the value'}: {e.message}"
                    for e in errors[:10]
                ],
            )

    return check


def _resource_entry(
    adopter: Resource, spec: ResourceSpec
) -> tuple[ResourceEntry | None, list[str]]:
    where = _declaration_of(adopter)
    if isinstance(adopter, FunctionResource):
        template = adopter.template
        problems: list[str] = []
    else:
        try:
            template = UriTemplate.parse(spec.uri, where=where)
        except InvalidDeclaration as exc:
            return None, list(exc.problems)
        problems = (
            []
            if spec.description or isinstance(adopter, ViewResource)  # optional there
            else [f"resource '{spec.uri}' ({where}): has no description"]
        )
    entry = ResourceEntry(
        declaration=where, spec=spec, adopter=adopter, template=template
    )
    return entry, [*problems, *completion_problems(spec, where)]


def _prompt_entry(adopter: Prompt, spec: PromptSpec) -> tuple[PromptEntry, list[str]]:
    where = _declaration_of(adopter)
    problems: list[str] = []
    if not isinstance(adopter, FunctionPrompt) and not spec.description:
        problems.append(f"prompt '{spec.name}' ({where}): has no description")
    problems.extend(completion_problems(spec, where))
    return PromptEntry(declaration=where, spec=spec, adopter=adopter), problems


E = TypeVar("E", bound=Entry)
Sp = TypeVar("Sp", ToolSpec, ResourceSpec, PromptSpec)


def _entries(
    adopters: Sequence[object],
    protocol: type,
    spec_type: type[Sp],
    make: Callable[[Any, Sp], tuple[E | None, list[str]]],
    problems: list[str],
) -> list[E]:
    """The entries of one list (``tools=``, ...); what is wrong goes to ``problems``."""
    label = f"{protocol.__name__.lower()}s"
    entries: list[E] = []
    for adopter in adopters:
        spec, found = _spec_of(adopter, protocol, spec_type, label)
        problems.extend(found)
        if isinstance(spec, spec_type):
            entry, found = make(adopter, spec)
            problems.extend(found)
            if entry is not None:
                entries.append(entry)
    return entries


class Catalog:
    """Tools, resources and prompts, checked and indexed for dispatch.

    Raises:
        InvalidDeclaration: listing every problem of every entry.
        DuplicateName: if two tools, two prompts or two resources share a name/URI.
    """

    def __init__(
        self,
        tools: Sequence[object],
        resources: Sequence[object],
        prompts: Sequence[object],
        relayed: Sequence[Entry] = (),
    ) -> None:
        problems: list[str] = []
        tool_entries = _entries(tools, Tool, ToolSpec, _tool_entry, problems)
        views = served_views((e.spec for e in tool_entries), resources)
        problems.extend(views.problems)
        resource_entries = _entries(
            views.resources, Resource, ResourceSpec, _resource_entry, problems
        )
        prompt_entries = _entries(prompts, Prompt, PromptSpec, _prompt_entry, problems)
        uris = [(e.spec.uri, e.declaration) for e in resource_entries]
        problems.extend(overlapping(uris))
        if problems:
            raise InvalidDeclaration(problems)
        _no_duplicates("tool name", tool_entries)
        _no_duplicates("prompt name", prompt_entries)
        _no_duplicates("resource URI", resource_entries)
        self.tool_list = [e.adopter for e in tool_entries]
        # As given: the views of tools are found again from the tools of a new catalog.
        self.resource_list = list(resources)
        self.prompt_list = [e.adopter for e in prompt_entries]
        self.relayed = tuple(relayed)
        """The entries other servers answer (``Server(upstreams=...)``), as given."""
        tool_entries, prompt_entries, resource_entries = _served(
            tool_entries, prompt_entries, resource_entries, self.relayed
        )
        self.tools = {e.spec.name: e for e in tool_entries}
        self.prompts = {e.spec.name: e for e in prompt_entries}
        self.resources = resource_entries
        self.static_resources = [e for e in resource_entries if not e.spec.is_template]
        self._static_by_uri = {e.spec.uri: e for e in self.static_resources}
        self.templates = [e for e in resource_entries if e.spec.is_template]
        self.wire_tools: list[JsonObject] = [e.to_wire() for e in tool_entries]
        self.has_task_tools = any(e.spec.task is not None for e in tool_entries)
        """Whether a tool may run as a task (the tasks extension is served)."""
        self.has_views = views.any
        """Whether a view is served (the MCP Apps extension is advertised)."""
        self.wire_prompts: list[JsonObject] = [e.to_wire() for e in prompt_entries]
        self.wire_resources: list[JsonObject] = [
            e.to_wire() for e in self.static_resources
        ]
        self.wire_templates: list[JsonObject] = [e.to_wire() for e in self.templates]
        self.pages = {
            "tools/list": Pages("tools", "tools", self.wire_tools),
            "prompts/list": Pages("prompts", "prompts", self.wire_prompts),
            "resources/list": Pages("resources", "resources", self.wire_resources),
            "resources/templates/list": Pages(
                "templates", "resourceTemplates", self.wire_templates
            ),
        }
        """Each list method's pages, encoded on first use."""
        self._entries_of: dict[str, list[Entry]] = {
            "tools/list": list(tool_entries),
            "prompts/list": list(prompt_entries),
            "resources/list": list(self.static_resources),
            "resources/templates/list": list(self.templates),
        }
        self._visible_pages: dict[tuple[str, frozenset[str]], Pages] = {}

    def pages_for(self, method: str, visible: frozenset[str] | None) -> Pages:
        """The pages of a list method; with ``visible``, only the entries whose
        required capabilities it holds (``BearerAuth(hide_ungranted=True)``).

        Filtered pages are kept per set of capabilities (a few hundred at most).
        """
        if visible is None:
            return self.pages[method]
        key = (method, visible)
        found = self._visible_pages.get(key)
        if found is None:
            full = self.pages[method]
            items = [
                item
                for entry, item in zip(
                    self._entries_of[method], full.items, strict=True
                )
                if entry.required <= visible
            ]
            if len(self._visible_pages) >= 256:
                self._visible_pages.clear()
            found = self._visible_pages[key] = Pages(full.kind, full.key, items)
        return found

    def names(self) -> dict[str, set[str]]:
        """The wire names served, per receipt kind (``tool``, ``prompt``,
        ``resource``)."""
        return {
            "tool": set(self.tools),
            "prompt": set(self.prompts),
            "resource": {e.name for e in self.resources},
        }

    def specs(self) -> list[ToolSpec | ResourceSpec | PromptSpec]:
        """Return every entry's spec: tools, then resources, then prompts, in list order."""
        return [
            *(e.spec for e in self.tools.values()),
            *(e.spec for e in self.resources),
            *(e.spec for e in self.prompts.values()),
        ]

    def find_resource(self, uri: str) -> tuple[ResourceEntry, dict[str, str]] | None:
        """Return the entry serving ``uri`` and its variables: static URIs first."""
        entry = self._static_by_uri.get(uri)
        if entry is not None:
            return entry, {}
        for entry in self.templates:
            variables = entry.template.match(uri)
            if variables is not None:
                return entry, variables
        return None

    def is_updatable(self, uri: str) -> bool:
        """Whether ``uri`` is served by a declaration marked ``updatable=True``."""
        found = self.find_resource(uri)
        return found is not None and found[0].spec.updatable

    def guarded(self, kind: str | None = None) -> bool:
        """Whether any entry (of ``kind``, or of any kind) requires capabilities."""
        groups: dict[str, Iterable[Entry]] = {
            "tools": self.tools.values(),
            "prompts": self.prompts.values(),
            "resources": self.resources,
        }
        chosen = groups.values() if kind is None else [groups[kind]]
        return any(e.spec.caps for group in chosen for e in group)


def _no_duplicates(what: str, entries: Sequence[Entry]) -> None:
    seen: dict[str, str] = {}
    for entry in entries:
        key = entry.name
        if key in seen:
            fix = "another URI" if what.endswith("URI") else "another name (name=...)"
            raise DuplicateName(
                f"{what} '{key}' is used by both {seen[key]} and {entry.declaration}; "
                f"give one of them {fix}"
            )
        seen[key] = entry.declaration


def _served(
    tools: list[ToolEntry],
    prompts: list[PromptEntry],
    resources: list[ResourceEntry],
    relayed: Sequence[Entry],
) -> tuple[list[ToolEntry], list[PromptEntry], list[ResourceEntry]]:
    """The server's own entries, then the relayed ones whose name or URI no
    earlier source serves: a collision keeps the earlier one and is logged."""
    tools, prompts, resources = list(tools), list(prompts), list(resources)
    groups: list[tuple[type, list[Any]]] = [
        (ToolEntry, tools),
        (PromptEntry, prompts),
        (ResourceEntry, resources),
    ]
    taken = {id(group): {e.name: e for e in group} for _, group in groups}
    for entry in relayed:
        for kind, group in groups:
            if isinstance(entry, kind):
                held = taken[id(group)].setdefault(entry.name, entry)
                if held is entry:
                    group.append(entry)
                else:
                    log.warning(
                        "'%s' of upstream %s is not served: %s serves that name",
                        entry.name,
                        entry.upstream,
                        _source(held),
                    )
                break
    return tools, prompts, resources


def _source(entry: Entry) -> str:
    """Who serves ``entry``, for a log line."""
    upstream = entry.upstream
    return entry.declaration if upstream is None else f"upstream {upstream}"
