"""Lower layers never import higher ones (style.md §2), checked by reading the source.

The table is style.md's, adapted to the package as it is: ``_json`` sits with the
other plain helpers at layer 0, and ``testing``/``_cli`` drive the ``Server`` facade
(layer 7) rather than only the names re-exported by ``trio_mcp``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import attrs
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trio_mcp"

#: Layer of each direct child of trio_mcp (a module or a subpackage).
LAYERS = {
    "_errors": 0,
    "_units": 0,
    "_version": 0,
    "_json": 0,
    "_instance": 0,
    "_loopback": 0,
    "_checks": 1,  # the checks of public constructors (InvalidArgument)
    "_protocol": 1,
    "_authority": 1,
    "_limits": 1,
    "_rate_limit": 1,
    "_schema": 2,
    "_decode": 2,
    "_context": 3,
    "_otel": 3,
    "_metrics": 3,
    "_redis": 3,  # the Redis connection of RedisStore and RedisBroadcast (coredis lazily)
    "_changes": 3,  # broadcast, Redis, listen streams: know no catalog or call
    "_interrupt": 3,  # Ctrl-C while serving, for every transport
    "_blocked": 3,  # the blocked-loop watch (Limits.blocked_warning), for every transport
    "_declare": 4,
    "_dispatch": 5,
    "_store": 5,  # shared state (buckets, task records): below the dispatcher's users
    "_skills": 5,  # the skills extension (SEP-2640), beside the dispatcher
    "_tasks": 6,  # the tasks extension runs calls through the dispatcher's runner
    "_transports": 7,
    "_http": 7,
    "_legacy": 8,  # the handshake-era session machine in front of the transports
    "_server": 8,
    "_server_options": 8,  # Server(...)'s keywords beyond those it names
    "_serving": 8,  # the ways to serve a Server (a base of Server)
    "_upstream": 8,  # other servers served beside a Server's own (upstreams=)
    "testing": 9,
    "_cli": 9,
    "auth": 9,  # the OAuth resource server (extra auth): never imported by trio_mcp
    "asyncio": 9,  # asyncio hosts (Trio as their guest): never imported by trio_mcp
    "client": 9,  # an MCP client (extra client): never imported by trio_mcp
    "__main__": 9,
}
#: The public facade re-exports layers 0-8; as an import target it is the public API.
ROOT_OWN_LAYER = 8
ROOT_AS_TARGET = 9

#: Third-party packages a layer may import at module level (cumulative).
EAGER_BY_LAYER = {
    0: set(),
    1: {"attrs"},
    2: {"attrs", "cattrs"},
    3: {"attrs", "cattrs", "trio"},
    4: {"attrs", "cattrs", "trio", "docstring_parser"},
}
EAGER_BY_LAYER |= dict.fromkeys((5, 6, 7, 8), EAGER_BY_LAYER[4])
EAGER_BY_LAYER[9] = EAGER_BY_LAYER[4] | {"pytest"}
#: A subpackage that is an extra of its own may import that extra's packages eagerly:
#: ``import trio_mcp`` never imports it (tests/test_exports.py).
EAGER_BY_SUBPACKAGE = {
    "auth": EAGER_BY_LAYER[4] | {"httpx", "joserfc"},
    # The guest run's done callback gets an outcome.Outcome (Trio's own dependency).
    "asyncio": EAGER_BY_LAYER[4] | {"outcome"},
    # The HTTP link speaks HTTP/1.1 through h11 (its module is loaded for URLs only).
    "client": EAGER_BY_LAYER[4] | {"h11"},
}
#: Extras and test-only packages: imported inside functions (or for type checking).
OPTIONAL = {
    "hypercorn",
    "h11",
    "wsproto",
    "trio_websocket",
    "opentelemetry",
    "jsonschema",
    "coredis",
    "httpx",
    "joserfc",
    "yaml",  # PyYAML: skill frontmatter, read when a Server has skills
    "cryptography",  # seals requestState, imported on the first seal
    "prometheus_client",
    # Models and Secret's pydantic schema: only when a declaration holds a model.
    "pydantic",
    "pydantic_core",
}
#: The wire layer does no I/O (style.md §1: imports neither trio nor sockets).
NO_IO = {"socket", "asyncio", "selectors", "trio"}


@attrs.frozen
class Import:
    source: str
    target: str
    line: int
    module_level: bool
    type_checking: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, source: str, package: str) -> None:
        self.source = source
        self.package = package
        self.found: list[Import] = []
        self._depth = 0
        self._type_checking = 0

    def _add(self, target: str, node: ast.stmt) -> None:
        self.found.append(
            Import(
                self.source,
                target,
                node.lineno,
                self._depth == 0,
                self._type_checking > 0,
            )
        )

    def _nested(self, node: ast.AST) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = _nested
    visit_AsyncFunctionDef = _nested
    visit_Lambda = _nested

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._type_checking += 1
            for child in node.body:
                self.visit(child)
            self._type_checking -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not node.level:
            assert node.module is not None
            self._add(node.module, node)
            return
        base = self.package.split(".")
        base = base[: len(base) - (node.level - 1)]
        if node.module:
            self._add(".".join([*base, node.module]), node)
        else:  # from .. import _otel: each name is a module of that package
            for alias in node.names:
                self._add(".".join([*base, alias.name]), node)


def collect() -> list[Import]:
    found: list[Import] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        collector = _Collector(name, package)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        found.extend(collector.found)
    return found


IMPORTS = collect()
MODULES = sorted({module_name(p) for p in PACKAGE.rglob("*.py")})


def layer_of(module: str, *, as_target: bool) -> int:
    parts = module.split(".")
    if parts == ["trio_mcp"]:
        return ROOT_AS_TARGET if as_target else ROOT_OWN_LAYER
    return LAYERS[parts[1]]


def internal(imp: Import) -> bool:
    return imp.target == "trio_mcp" or imp.target.startswith("trio_mcp.")


def third_party(imp: Import) -> str | None:
    top = imp.target.split(".")[0]
    if internal(imp) or top in sys.stdlib_module_names or top == "__future__":
        return None
    return top


def test_every_module_has_a_layer() -> None:
    """A new subpackage must be placed in the table before it can be checked."""
    unplaced = sorted(
        m for m in MODULES if m != "trio_mcp" and m.split(".")[1] not in LAYERS
    )

    assert [] == unplaced


def test_the_walk_sees_the_imports() -> None:
    """Guard against a walker that silently finds nothing."""
    sources = {imp.source for imp in IMPORTS if internal(imp)}

    assert {"trio_mcp._server", "trio_mcp._dispatch._dispatcher"} <= sources


#: The one way up the layers, named by the contract: a server loads the client layer
#: when it serves a remote upstream ("the server core never imports it unless an
#: upstream or a client is used"), inside functions only (or for type checking).
LAZY_UPWARD = {("trio_mcp._upstream._supervise", "trio_mcp.client")}


def _lazy_upward(imp: Import) -> bool:
    allowed = (imp.source, imp.target) in LAZY_UPWARD
    return allowed and (not imp.module_level or imp.type_checking)


@pytest.mark.parametrize("module", [m for m in MODULES if m != "trio_mcp"])
def test_no_module_imports_a_higher_layer(module: str) -> None:
    own = layer_of(module, as_target=False)
    upward = [
        f"line {imp.line}: {imp.target} (layer {layer_of(imp.target, as_target=True)})"
        for imp in IMPORTS
        if imp.source == module
        and internal(imp)
        and layer_of(imp.target, as_target=True) > own
        and not _lazy_upward(imp)
    ]

    assert [] == upward, f"{module} is layer {own}"


def test_only_the_supervisor_loads_the_client_and_never_at_import() -> None:
    """``import trio_mcp`` (and a server of composed upstreams only) never loads
    ``trio_mcp.client``."""
    loaders = [
        f"{imp.source} line {imp.line}"
        for imp in IMPORTS
        if imp.target.startswith("trio_mcp.client")
        and not imp.source.startswith(("trio_mcp.client", "trio_mcp._cli"))
        and layer_of(imp.source, as_target=False) < LAYERS["client"]
        and not _lazy_upward(imp)
    ]

    assert [] == loaders


def test_dispatch_never_imports_tasks() -> None:
    """The tasks extension uses the dispatcher's runner, never the other way round."""
    upward = [
        f"{imp.source} line {imp.line}"
        for imp in IMPORTS
        if imp.source.startswith("trio_mcp._dispatch")
        and imp.target.startswith("trio_mcp._tasks")
    ]

    assert [] == upward


def test_the_public_facade_imports_no_tooling() -> None:
    """`import trio_mcp` must not pull in testing (pytest) or the CLI."""
    tooling = [
        imp.target
        for imp in IMPORTS
        if imp.source == "trio_mcp"
        and internal(imp)
        and imp.target != "trio_mcp"
        and LAYERS[imp.target.split(".")[1]] > ROOT_OWN_LAYER
    ]

    assert [] == tooling


@pytest.mark.parametrize("module", MODULES)
def test_third_party_imports_fit_the_layer(module: str) -> None:
    own = layer_of(module, as_target=False)
    parts = module.split(".")
    eager = EAGER_BY_LAYER[own]
    if len(parts) > 1 and parts[1] in EAGER_BY_SUBPACKAGE:
        eager = EAGER_BY_SUBPACKAGE[parts[1]]
    wrong = []
    for imp in IMPORTS:
        top = third_party(imp) if imp.source == module else None
        if top is None:
            continue
        if imp.module_level and not imp.type_checking:
            if top not in eager:
                wrong.append(f"line {imp.line}: {imp.target} at module level")
        elif top not in eager | OPTIONAL:
            wrong.append(f"line {imp.line}: {imp.target}")

    assert [] == wrong, f"{module} is layer {own}"


@pytest.mark.parametrize(
    "module", [m for m in MODULES if ".".join(m.split(".")[:2]) == "trio_mcp._protocol"]
)
def test_the_protocol_layer_does_no_io(module: str) -> None:
    io = [
        f"line {imp.line}: {imp.target}"
        for imp in IMPORTS
        if imp.source == module and imp.target.split(".")[0] in NO_IO
    ]

    assert [] == io


def child_graph() -> dict[str, set[str]]:
    """Which direct children of trio_mcp (modules and packages) import which,
    counting every import: lazy ones and those for the type checker too."""
    graph: dict[str, set[str]] = {}
    for imp in IMPORTS:
        if not internal(imp) or "trio_mcp" in (imp.source, imp.target):
            continue
        source, target = imp.source.split(".")[1], imp.target.split(".")[1]
        if source != target:
            graph.setdefault(source, set()).add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` with more than one node."""
    reach = {node: _reachable(graph, node) for node in graph}
    found: list[set[str]] = []
    for node in sorted(graph):
        component = {other for other in reach[node] if node in reach.get(other, ())}
        if len(component) > 1 and component not in found:
            found.append(component)
    return found


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    assert [{"a", "b", "c"}] == cycles(graph)
    assert [] == cycles({"a": {"b"}, "b": set()})


def test_no_two_packages_import_each_other() -> None:
    """Issue 41: no cycle between trio_mcp's packages (or top-level modules),
    through any chain of imports, type-checking and lazy ones included."""
    assert [] == cycles(child_graph())
