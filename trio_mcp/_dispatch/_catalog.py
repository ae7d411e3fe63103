"""The catalog: the declarations a server serves, validated together, in list order.

Validation gathers every problem at once, so an author fixes them in one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._declare import Declaration, Prompt, Resource, Tool
from .._errors import DuplicateName, InvalidDeclaration
from .._json import JsonObject

__all__ = ["Catalog"]


def _check_kind(items: Iterable[object], kind: type, label: str) -> list[str]:
    found = []
    for item in items:
        if not isinstance(item, kind):
            found.append(
                f"{label}= takes @{kind.kind} declarations, got {item!r}; "  # type: ignore[attr-defined]
                f"decorate it with @{kind.kind}"  # type: ignore[attr-defined]
            )
    return found


class Catalog:
    """Tools, resources and prompts, checked and indexed for dispatch.

    Raises:
        InvalidDeclaration: listing every problem of every declaration.
        DuplicateName: if two tools, two prompts or two resources share a name/URI.
    """

    def __init__(
        self,
        tools: Sequence[Tool[..., object]],
        resources: Sequence[Resource[..., object]],
        prompts: Sequence[Prompt[..., object]],
    ) -> None:
        tools, resources, prompts = list(tools), list(resources), list(prompts)
        problems = (
            _check_kind(tools, Tool, "tools")
            + _check_kind(resources, Resource, "resources")
            + _check_kind(prompts, Prompt, "prompts")
        )
        if problems:
            raise InvalidDeclaration(problems)
        for decl in [*tools, *resources, *prompts]:
            try:
                decl.ensure_prepared()
            except InvalidDeclaration as exc:
                problems.extend(exc.problems)
                continue
            problems.extend(decl.problems())
        if problems:
            raise InvalidDeclaration(problems)
        _no_duplicates("tool name", [(t.name, t) for t in tools])
        _no_duplicates("prompt name", [(p.name, p) for p in prompts])
        _no_duplicates("resource URI", [(r.uri, r) for r in resources])
        self.tools: dict[str, Tool[..., object]] = {t.name: t for t in tools}
        self.prompts: dict[str, Prompt[..., object]] = {p.name: p for p in prompts}
        self.resources = resources
        self.static_resources = [r for r in resources if not r.is_template]
        self.templates = [r for r in resources if r.is_template]
        self.tool_specs = [t.spec() for t in tools]
        self.prompt_specs = [p.spec() for p in prompts]
        self.resource_specs = [r.spec() for r in self.static_resources]
        self.template_specs = [r.spec() for r in self.templates]
        self.wire_tools: list[JsonObject] = [s.to_wire() for s in self.tool_specs]
        self.wire_prompts: list[JsonObject] = [s.to_wire() for s in self.prompt_specs]
        self.wire_resources: list[JsonObject] = [
            s.to_wire() for s in self.resource_specs
        ]
        self.wire_templates: list[JsonObject] = [
            s.to_wire() for s in self.template_specs
        ]

    def specs(self) -> list[object]:
        """Return every entry's spec: tools, then resources, then prompts, in list order."""
        return [
            *self.tool_specs,
            *(r.spec() for r in self.resources),
            *self.prompt_specs,
        ]

    def find_resource(
        self, uri: str
    ) -> tuple[Resource[..., object], dict[str, str]] | None:
        """Return the declaration serving ``uri`` and its variables: static URIs first."""
        for res in self.static_resources:
            if res.uri == uri:
                return res, {}
        for res in self.templates:
            variables = res.match(uri)
            if variables is not None:
                return res, variables
        return None

    def guarded(self, kind: str) -> bool:
        """Whether any declaration of ``kind`` requires capabilities (then lists are private)."""
        group: Iterable[Declaration[..., object]] = {
            "tools": self.tools.values(),
            "prompts": self.prompts.values(),
            "resources": self.resources,
        }[kind]
        return any(d.caps for d in group)


def _no_duplicates(what: str, entries: list[tuple[str, object]]) -> None:
    seen: dict[str, object] = {}
    for key, decl in entries:
        if key in seen:
            first = getattr(seen[key], "declaration", seen[key])
            second = getattr(decl, "declaration", decl)
            fix = "another URI" if what.endswith("URI") else "another name (name=...)"
            raise DuplicateName(
                f"{what} '{key}' is used by both {first} and {second}; "
                f"give one of them {fix}"
            )
        seen[key] = decl
