"""The public surface: __all__ sorted and complete, names at home in trio_mcp, a light import."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import types
import typing
from typing import Any

import pytest

import trio_mcp
import trio_mcp.asyncio
import trio_mcp.auth
import trio_mcp.testing

WEB_STACK = (
    "hypercorn",
    "h11",
    "wsproto",
    "trio_websocket",
    "opentelemetry",
    "coredis",
    "redis",
    "anyio",
    "httpx",
    "joserfc",
)

#: Names api.md promises at the top level.
PROMISED = {
    "Answer", "AudioContent", "BlobResourceContents", "Capability", "DecodeError",
    "DuplicateName", "Elicit", "ElicitResult", "ElicitUrl", "EmbeddedResource", "Field",
    "ImageContent", "InsecureBinding", "InvalidDeclaration", "ListRoots", "McpError",
    "NeedsInput", "PromptMessage", "Receipt", "RedisBroadcast", "ResourceLink", "Sample",
    "Secret", "Server", "TextContent", "TextResourceContents", "ToolContext", "ToolError",
    "ToolHints", "Transport", "decode", "encode", "json_schema", "prompt", "resource",
    "tool",
}  # fmt: skip


def public_names(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }


def test_all_is_sorted() -> None:
    assert sorted(trio_mcp.__all__) == trio_mcp.__all__


def test_all_has_no_duplicates() -> None:
    assert len(set(trio_mcp.__all__)) == len(trio_mcp.__all__)


def test_all_lists_every_public_name_and_nothing_else() -> None:
    assert public_names(trio_mcp) == set(trio_mcp.__all__) - {"__version__"}


def test_every_name_api_md_promises_is_exported() -> None:
    assert set() == PROMISED - set(trio_mcp.__all__)


def test_the_testing_package_exports_what_it_lists() -> None:
    exported = set(trio_mcp.testing.__all__)

    assert {"McpTestClient", "ProtocolError", "ToolResult"} <= exported
    assert public_names(trio_mcp.testing) == exported


@pytest.mark.parametrize("name", [n for n in trio_mcp.__all__ if n != "__version__"])
def test_each_public_object_says_it_lives_in_trio_mcp(name: str) -> None:
    assert "trio_mcp" == getattr(trio_mcp, name).__module__


#: String aliases (recursive JSON) and TYPE_CHECKING-only names: never evaluable.
UNEVALUABLE = ("JsonValue", "JsonObject", "Number")


@pytest.mark.parametrize(
    "name",
    [n for n in trio_mcp.__all__ if isinstance(getattr(trio_mcp, n), type)],
)
def test_renaming_the_module_keeps_annotations_resolvable(name: str) -> None:
    """Regression: once __module__ became "trio_mcp", get_type_hints looked for
    Literal, Mapping, ... in trio_mcp's namespace (breaking cattrs and attrs)."""
    cls = getattr(trio_mcp, name)

    unresolved = {
        field: value
        for field, value in inspect.get_annotations(cls).items()
        if isinstance(value, str) and not any(a in value for a in UNEVALUABLE)
    }

    assert {} == unresolved


def test_a_public_value_class_encodes_after_the_rename() -> None:
    message = trio_mcp.PromptMessage.user("hi")

    assert isinstance(trio_mcp.encode(message), dict)


def test_the_error_classes_are_one_class_under_both_spellings() -> None:
    for name in ("InvalidDeclaration", "DuplicateName", "Transport", "InsecureBinding"):
        assert getattr(trio_mcp.McpError, name) is getattr(trio_mcp, name)


def test_version_is_a_string() -> None:
    assert isinstance(trio_mcp.__version__, str)
    assert trio_mcp.__version__


@pytest.mark.parametrize("module", ["trio_mcp", "trio_mcp.testing"])
def test_importing_loads_no_web_stack(module: str) -> None:
    """api.md: importing trio_mcp must not import hypercorn (nor the other extras)."""
    assert [] == _web_stack_after(f"import {module}\n")


#: A script that declares one tool and builds a server, nothing more.
BUILD_A_SERVER = (
    "from trio_mcp import Server, tool\n"
    "@tool\n"
    "def ping() -> str:\n"
    "    '''Answer.'''\n"
    "    return 'pong'\n"
    "Server('s', '1', tools=[ping])\n"
)


def test_building_a_server_loads_no_web_stack() -> None:
    """api.md: stdio and the test client work without the web stack."""

    assert [] == _web_stack_after(BUILD_A_SERVER)


def test_importing_leaves_decoding_and_docstrings_to_their_first_use() -> None:
    """cattrs (decoding), jsonschema (passthrough and output checks) and
    docstring-parser come with the first declaration, decode or check that needs
    them, not with ``import trio_mcp`` (a CLI, a test collection, ``trio-mcp
    check`` do not pay for them)."""
    first_use = ("cattrs", "jsonschema", "docstring_parser")

    assert [] == _loaded_after("import trio_mcp\n", first_use)


def test_oauth_code_comes_with_its_first_use() -> None:
    """A server that checks no tokens loads no OAuth code: ``ProtectedResource`` is
    loaded when first read (trio_mcp's import time is a target of bench/run.sh), and
    is then the same public class as ever."""
    oauth = {"trio_mcp._http._oauth", "trio_mcp.auth"}
    read = "from trio_mcp import ProtectedResource\n"

    assert set() == oauth & set(_loaded_after(BUILD_A_SERVER, ("trio_mcp",)))
    assert {"trio_mcp._http._oauth"} == oauth & set(_loaded_after(read, ("trio_mcp",)))
    assert "trio_mcp" == trio_mcp.ProtectedResource.__module__
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        trio_mcp.Nope  # noqa: B018


def _web_stack_after(code: str) -> list[str]:
    """The web stack's modules a fresh interpreter holds once it has run ``code``."""
    return _loaded_after(code, WEB_STACK)


def _loaded_after(code: str, packages: tuple[str, ...]) -> list[str]:
    """The modules of ``packages`` a fresh interpreter holds once it has run ``code``."""
    report = "import json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    completed = subprocess.run(
        [sys.executable, "-c", code + report],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded = json.loads(completed.stdout)
    return sorted(m for m in loaded if m.split(".")[0] in packages)


def _as_defined(obj: object) -> Any:
    """``obj`` as its defining module knew it: the registry of overloads is keyed by
    module, and trio_mcp re-homes its public names (``__module__ == "trio_mcp"``)."""
    code = getattr(obj, "__code__", None)
    if code is None:
        return obj
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == code.co_filename:
            return types.SimpleNamespace(
                __module__=module.__name__,
                __qualname__=obj.__qualname__,  # type: ignore[attr-defined]
            )
    return obj


def _annotations(obj: object) -> dict[str, object]:
    """The annotations of a public callable, or of each overload when it has them."""
    overloads = typing.get_overloads(_as_defined(obj)) if callable(obj) else []
    targets: list[object] = [*overloads] or [obj]
    found: dict[str, object] = {}
    for index, target in enumerate(targets):
        for key, value in getattr(target, "__annotations__", {}).items():
            found[f"{key}#{index}"] = value
    return found


def _public_callables(module: types.ModuleType) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for name in module.__all__:
        obj = getattr(module, name)
        found.append((name, obj))
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__", "__call__"):
                    continue
                if isinstance(member, property):
                    member = member.fget
                found.append((f"{name}.{attr}", getattr(member, "__func__", member)))
    return found


@pytest.mark.parametrize(
    "module", [trio_mcp, trio_mcp.testing, trio_mcp.auth], ids=lambda m: m.__name__
)
def test_no_public_signature_says_any(module: types.ModuleType) -> None:
    """Raw JSON is ``JsonValue``; ``Any`` would switch the reader's type checker off."""
    offenders = [
        f"{name} {key}: {value}"
        for name, obj in _public_callables(module)
        for key, value in _annotations(obj).items()
        if re.search(r"\bAny\b", str(value))
    ]

    assert [] == offenders


#: The packages api.md names beside trio_mcp, each imported only by who uses it
#: (``auth`` comes with the extra of that name), and what each exports.
OPTIONAL = {
    "auth": [
        "BearerAuth",
        "ExchangeFailed",
        "HeldToken",
        "Introspection",
        "TokenExchange",
        "TokenPrincipal",
    ],
    "asyncio": ["AsyncioApp", "mount"],
    "client": [
        "Client",
        "Completion",
        "InputRequest",
        "PromptResult",
        "ReadResult",
        "ServerInfo",
        "ToolResult",
    ],
}


@pytest.mark.parametrize(("name", "exported"), OPTIONAL.items(), ids=list(OPTIONAL))
def test_an_optional_package_exports_what_api_md_promises(
    name: str, exported: list[str]
) -> None:
    package = importlib.import_module(f"trio_mcp.{name}")

    assert exported == package.__all__
    assert public_names(package) == set(package.__all__)
    for attr in package.__all__:
        assert f"trio_mcp.{name}" == getattr(package, attr).__module__


@pytest.mark.parametrize("name", list(OPTIONAL))
@pytest.mark.parametrize("module", ["trio_mcp", "trio_mcp.testing"])
def test_importing_never_loads_an_optional_package(module: str, name: str) -> None:
    """api.md: ``import trio_mcp`` never imports trio_mcp.auth (extra ``auth``) nor
    trio_mcp.asyncio."""
    code = f"import json, sys, {module}\nprint(json.dumps(sorted(sys.modules)))\n"
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    assert f"trio_mcp.{name}" not in json.loads(completed.stdout)
