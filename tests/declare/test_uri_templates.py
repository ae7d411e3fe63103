"""RFC 6570 ``{+var}`` templates, and ``..`` segments refused before any reader runs."""

from __future__ import annotations

import unicodedata
import urllib.parse

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from support import wire

from trio_mcp import (
    InvalidDeclaration,
    Receipt,
    ResourceRead,
    ResourceReply,
    ResourceSpec,
    Server,
    TextResourceContents,
    resource,
)
from trio_mcp._declare import UriTemplate, escaping_variable
from trio_mcp.testing import McpTestClient, ProtocolError

read_paths: list[str] = []


@resource(uri="files://{+path}")
def read_file(path: str) -> str:
    """A file under the served folder.

    Args:
        path: The file's path, which may hold '/'.
    """
    read_paths.append(path)
    return f"contents of {path}"


@resource(uri="notes://{folder}/{name}")
def read_note(folder: str, name: str) -> str:
    """One note in a folder.

    Args:
        folder: The folder.
        name: The note.
    """
    read_paths.append(f"{folder}|{name}")
    return name


@resource(uri="memo://{name}")
def read_memo(name: str) -> str:
    """One memo, named by a single path segment.

    Args:
        name: The memo's name.
    """
    read_paths.append(name)
    return name


class RawFiles:
    """A hand-written resource adopter with a reserved-expansion template."""

    def spec(self) -> ResourceSpec:
        return ResourceSpec(uri="raw://{+path}", name="raw", description="Raw files.")

    async def dispatch(self, read: ResourceRead) -> ResourceReply:
        read_paths.append(read.variables["path"])
        return ResourceReply((TextResourceContents(read.uri, "raw"),))


def server(receipts: list[Receipt] | None = None) -> Server:
    return Server(
        "files",
        "1",
        resources=[read_file, read_note, read_memo, RawFiles()],
        receipts=None if receipts is None else receipts.append,
    )


async def test_a_reserved_variable_matches_a_value_with_slashes() -> None:
    read_paths.clear()
    async with McpTestClient(server()) as client:
        templates = await client.list_resource_templates()
        read = await client.read_resource("files://docs/2026/plan%20b.md")

    assert "files://{+path}" in [t["uriTemplate"] for t in templates]
    assert "contents of docs/2026/plan b.md" == wire(read)["contents"][0]["text"]
    assert ["docs/2026/plan b.md"] == read_paths


async def test_a_simple_variable_still_matches_one_segment_only() -> None:
    async with McpTestClient(server()) as client:
        read = await client.read_resource("notes://inbox/today")
        with pytest.raises(ProtocolError) as info:
            await client.read_resource("notes://inbox/deep/today")

    assert "today" == wire(read)["contents"][0]["text"]
    assert -32602 == info.value.code


async def assert_refused_unread(uri: str, why: str) -> None:
    """Reading ``uri`` is -32602 naming ``why`` and the URI, with an ``invalid``
    receipt, and no reader ran."""
    read_paths.clear()
    receipts: list[Receipt] = []
    async with McpTestClient(server(receipts)) as client:
        with pytest.raises(ProtocolError) as info:
            await client.read_resource(uri)

    assert -32602 == info.value.code
    assert why in info.value.message
    assert {"uri": uri} == info.value.data
    assert [] == read_paths
    assert ["invalid"] == [r.outcome for r in receipts]


@pytest.mark.parametrize(
    "uri",
    [
        "files://../etc/passwd",
        "files://docs/../../etc/passwd",
        "files://docs/..",
        "files://%2e%2e/etc/passwd",
        "files://docs/%2E%2E/secret",
        "files://docs/%252e%252e/secret",
        "files://docs\\..\\secret",
        "notes://..%2Fsecret/x",
        "notes://%2e%2e/x",
        "raw://a/../b",
    ],
)
async def test_a_dot_dot_segment_is_refused_before_the_reader_runs(uri: str) -> None:
    """Brief: -32602 before the handler runs, for any template, however encoded."""
    await assert_refused_unread(uri, "'..'")


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("memo://%2Fetc%2Fpasswd", "'/'"),
        ("memo://etc%2Fpasswd", "'/'"),
        ("memo://etc%5Cpasswd", "'/'"),
        ("memo://etc%252Fpasswd", "'/'"),
        ("notes://inbox/%2Fetc%2Fpasswd", "'/'"),
        ("notes://%2F/x", "'/'"),
        ("files:////etc/passwd", "leading"),
        ("files://%2Fetc/passwd", "leading"),
        ("files://%252Fetc/passwd", "leading"),
        ("files://\\\\server\\share", "leading"),
        ("files://%5Cwindows", "leading"),
        ("files://C:/Windows/win.ini", "drive"),
        ("files://c%3A%5Cboot.ini", "drive"),
        ("files://d:", "drive"),
        ("memo://C:", "drive"),
        ("files://notes/a%00.txt", "NUL"),
        ("memo://a%2500b", "NUL"),
        ("raw:////etc/passwd", "leading"),
        ("raw://%2e%2e%2fetc", "'..'"),
        ("files://%25252525252Fetc", "encod"),
    ],
)
async def test_a_variable_that_escapes_is_refused_before_the_reader_runs(
    uri: str, why: str
) -> None:
    """Trust: a leading '/' or '\\', a drive letter, a NUL or a '/' inside a
    single-segment variable, however percent-encoded, is -32602 with a receipt."""
    await assert_refused_unread(uri, why)


@pytest.mark.parametrize("path", ["a..b", "...", "./x", "v1.2/..notes", "x/.", "%2e/x"])
async def test_dots_that_are_not_a_parent_segment_are_served(path: str) -> None:
    async with McpTestClient(server()) as client:
        read = await client.read_resource(f"files://{path}")

    assert wire(read)["contents"][0]["text"].startswith("contents of ")


@pytest.mark.parametrize("expression", ["{#x}", "{?x}", "{x,y}", "{/x}", "{+}"])
def test_other_template_operators_are_refused_at_decoration(expression: str) -> None:
    with pytest.raises(InvalidDeclaration, match="not supported"):

        @resource(uri=f"t://{expression}")
        def reader(x: str) -> str:
            """Read.

            Args:
                x: The value.
            """
            return x


SEGMENT = st.text(
    alphabet=st.characters(
        blacklist_characters="/\\?#%:\x00", blacklist_categories=["Cs"]
    ),
    min_size=1,
    max_size=8,
).filter(lambda s: s != "..")


@given(st.lists(SEGMENT, min_size=1, max_size=5))
def test_any_path_without_dot_dot_round_trips_through_a_reserved_template(
    segments: list[str],
) -> None:
    """Property: expanding {+path} with a path and matching gives the path back."""
    template = UriTemplate.parse("files://{+path}", where="test")
    path = "/".join(segments)
    uri = "files://" + urllib.parse.quote(path, safe="/")

    assert {"path": path} == template.match(uri)
    assert escaping_variable({"path": path}) is None


@given(
    st.lists(SEGMENT, max_size=3),
    st.lists(SEGMENT, max_size=3),
    st.sampled_from(["..", "%2e%2e", "%2E.", ".%2e", "%252e%252e"]),
    st.sampled_from(["/", "\\"]),
)
def test_any_path_with_a_parent_segment_is_caught(
    before: list[str], after: list[str], dots: str, separator: str
) -> None:
    path = separator.join([*before, dots, *after])

    assert "path" == (escaping_variable({"path": path}) or ("",))[0]


PIECE = st.sampled_from(
    [
        "a",
        "b.txt",
        "..",
        ".",
        "/",
        "\\",
        "C:",
        "z:",
        "\x00",
        "%",
        "%2F",
        "é",
        "?",
        "#",
        "\uff0e",
        "\uff0f",
        "\u2025",
    ]
)


def _layers(value: str) -> list[str]:
    """``value`` and every percent-decoding of it, until nothing changes."""
    layers = [value]
    while (decoded := urllib.parse.unquote(layers[-1])) != layers[-1]:
        layers.append(decoded)
    return layers


def _stays(value: str, *, segment: bool) -> bool:
    """The contract, read independently: no layer of ``value`` (nor its NFKC
    form) leaves its place."""
    layers = _layers(value)
    for layer in [*layers, *(unicodedata.normalize("NFKC", v) for v in layers)]:
        parts = layer.replace("\\", "/").split("/")
        if ".." in parts or "\x00" in layer or layer[:1] in ("/", "\\"):
            return False
        if layer == "." or "\\" in layer:
            return False
        if (
            len(layer) > 1
            and layer[0].isascii()
            and layer[0].isalpha()
            and layer[1] == ":"
        ):
            return False
        if segment and len(parts) > 1:
            return False
    return True


async def _read_all(uris: list[str]) -> list[int | str]:
    """Read every URI through real JSON: the error code, or the text read."""
    outcomes: list[int | str] = []
    async with McpTestClient(server()) as client:
        for uri in uris:
            try:
                read = await client.read_resource(uri)
            except ProtocolError as exc:
                outcomes.append(exc.code)
            else:
                outcomes.append(wire(read)["contents"][0]["text"])
    return outcomes


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(PIECE, min_size=1, max_size=6), st.integers(0, 2), st.booleans()
        ),
        min_size=1,
        max_size=8,
    )
)
def test_a_reader_never_receives_a_value_that_escapes(
    drawn: list[tuple[list[str], int, bool]],
) -> None:
    """Property (Trust): over real JSON, with separators encoded up to three times,
    a read is refused (-32602) exactly when its value would leave its place, and a
    reader only ever receives a value that stays."""
    uris, expected = [], []
    for pieces, layers, reserved in drawn:
        value = "".join(pieces)
        encoded = urllib.parse.quote(value, safe="/" if reserved else "")
        for _ in range(layers):
            encoded = urllib.parse.quote(encoded, safe="")
        uris.append(("files://" if reserved else "memo://") + encoded)
        received = urllib.parse.unquote(encoded)
        stays = _stays(received, segment=not reserved)
        expected.append(
            (f"contents of {received}" if reserved else received) if stays else -32602
        )
    read_paths.clear()

    assert expected == trio.run(_read_all, uris)
    assert all(_stays(p, segment=False) for p in read_paths)
