"""The views a server serves (MCP Apps, SEP-1865): read, compared, made resources.

A view reaches the catalog two ways: linked by a tool (``@tool(view=...)``, or any
``ToolSpec`` with a ``view``) or given in ``resources=``. Either way it becomes one
``ViewResource``, served by ``resources/list`` and ``resources/read`` through the
same call path as any other resource (grants, middleware, receipts). Views with one
URI are one resource when a host would see the same thing from each; when it would
not, the server refuses to start, since a host fetches a view by its URI alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from .._declare import (
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    TextResourceContents,
    ToolSpec,
    View,
)
from .._errors import InvalidDeclaration
from .._json import JsonObject
from .._protocol._apps import VIEW_MIME_TYPE

__all__ = ["ViewResource", "ViewsServed", "load_view", "served_views"]


@attrs.frozen(eq=False)
class ViewResource:
    """A view with its HTML read: the ``Resource`` adopter a server serves for it."""

    view: View
    text: str
    declaration: str = attrs.field(init=False)
    """What receipts and problems call it by."""

    @declaration.default
    def _declaration(self) -> str:
        return f"view {self.view.uri}"

    def _meta(self) -> JsonObject | None:
        ui = self.view.ui()
        return {"ui": ui} if ui else None

    def spec(self) -> ResourceSpec:
        """The listing: ``text/html;profile=mcp-app``, with the view's ``_meta.ui``.

        The spec's resource declaration may carry ``_meta.ui`` as well as its
        contents, so a host can review the CSP before it reads the HTML.
        """
        view = self.view
        return ResourceSpec(
            uri=view.uri,
            name=view.name or view.uri,
            description=view.description,
            mime_type=VIEW_MIME_TYPE,
            meta=self._meta(),
        )

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        """The HTML read when the server was built, with ``_meta.ui``."""
        contents = TextResourceContents(
            self.view.uri, self.text, VIEW_MIME_TYPE, meta=self._meta()
        )
        return ResourceReply([contents])

    def served(self) -> tuple[str, JsonObject]:
        """What a host sees of the view: its HTML and its listing."""
        return self.text, self.spec().to_wire()


def load_view(view: View) -> ViewResource:
    """The view with its HTML, read from its file now when ``html`` is a path.

    Raises:
        InvalidDeclaration: if the file cannot be read as UTF-8 text, or is empty.
    """
    html = view.html
    if isinstance(html, str):
        return ViewResource(view, html)
    where = f"View({view.uri!r})"
    try:
        text = html.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidDeclaration(
            f"{where}: cannot read its HTML from {str(html)!r} ({exc}); give the path "
            "of a readable UTF-8 file (a relative path starts at the current "
            "directory, so build it from Path(__file__).parent), or the HTML as a str"
        ) from None
    if not text.strip():
        raise InvalidDeclaration(
            f"{where}: {str(html)!r} is empty; a view needs its HTML document"
        )
    return ViewResource(view, text)


@attrs.frozen(eq=False)
class ViewsServed:
    """``resources=`` with each view made a resource, and the views tools link."""

    resources: list[object]
    """The resources to catalog: ``resources=`` in order (a ``View`` there replaced by
    its ``ViewResource``), then the views only tools link."""
    problems: list[str]
    """What keeps these views from being served."""
    any: bool
    """Whether the server serves a view (then it advertises the extension)."""


def served_views(tools: Iterable[ToolSpec], resources: Sequence[object]) -> ViewsServed:
    """Every view of ``resources=`` and of the tools, once per URI, checked."""
    specs = list(tools)
    linked = [(r, "resources=") for r in resources if isinstance(r, View)]
    linked += [(s.view, f"tool '{s.name}'") for s in specs if s.view is not None]
    problems: list[str] = []
    seen: set[View] = set()
    by_uri: dict[str, tuple[ViewResource, str]] = {}
    for view, who in linked:
        if view in seen:  # the same view again: one resource, read and checked once
            continue
        seen.add(view)
        try:
            resource = load_view(view)
        except InvalidDeclaration as exc:
            problems.extend(f"{who}: {problem}" for problem in exc.problems)
            continue
        first = by_uri.setdefault(view.uri, (resource, who))
        if first[0].served() != resource.served():
            problems.append(_conflict(view.uri, first, resource, who))
    problems.extend(_unreachable(specs, any_view=bool(by_uri)))
    return ViewsServed(_placed(resources, by_uri), problems, bool(by_uri))


def _placed(
    resources: Sequence[object], by_uri: dict[str, tuple[ViewResource, str]]
) -> list[object]:
    """``resources`` with each view's resource once, where it was first given."""
    out: list[object] = []
    placed: set[str] = set()
    for item in resources:
        if not isinstance(item, View):
            out.append(item)
        elif item.uri in by_uri and item.uri not in placed:
            placed.add(item.uri)
            out.append(by_uri[item.uri][0])
    out.extend(r for uri, (r, _) in by_uri.items() if uri not in placed)
    return out


def _conflict(
    uri: str, first: tuple[ViewResource, str], other: ViewResource, who: str
) -> str:
    (a, a_who), b, b_who = first, other, who
    what = "their HTML differs" if a.text != b.text else "their settings differ"
    return (
        f"{a_who} and {b_who} link two views with the URI {uri} and {what}; a host "
        "fetches a view by its URI alone, so give one of them another URI, or link "
        "the same View"
    )


def _unreachable(specs: list[ToolSpec], *, any_view: bool) -> list[str]:
    """Tools only a view may call, on a server with no view: nothing could call them."""
    if any_view:
        return []
    return [
        f"tool '{s.name}': visibility={s.visibility!r} leaves it to views (hidden from "
        "the model), but the server serves no view; link a View to a tool, or add "
        "'model'"
        for s in specs
        if s.visibility is not None and "model" not in s.visibility
    ]
