"""URI templates, round three (issue 34): the decoded value of each variable and of
the joined path are checked, so ``{a}{b}`` cannot form ``..``; a variable that is
``.``, ``..``, absolute, or holds ``\\`` or a NUL never reaches a reader; look-alikes
(percent-encoded, Unicode compatibility forms such as full-width dots) are checked
in their decoded and NFKC forms (docs/guides/resources-prompts.md says what holds).
"""

from __future__ import annotations

import unicodedata
import urllib.parse

import pytest
import trio
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import wire

from trio_mcp import FunctionResource, Receipt, Server, resource
from trio_mcp._declare import UriTemplate, escaping_variable
from trio_mcp.testing import McpTestClient, ProtocolError

received: list[tuple[str, str]] = []


def joined(name: str, uri: str) -> FunctionResource[[str, str], str]:
    """A resource whose two variables ``uri`` writes next to each other."""

    @resource(uri=uri, name=name)
    def join(a: str, b: str) -> str:
        """Two halves, joined.

        Args:
            a: The first half.
            b: The second half.
        """
        received.append((a, b))
        return a + b

    return join


pair = joined("pair", "pair://{a}{b}")
both = joined("both", "both://{+a}{+b}")


@resource(uri="dotted://{+a}.{b}/end")
def dotted(a: str, b: str) -> str:
    """A path, a dot, a name.

    Args:
        a: The path, which may hold '/'.
        b: The name.
    """
    received.append((a, b))
    return a + "." + b


@resource(uri="one://{+a}")
def one(a: str) -> str:
    """One path.

    Args:
        a: The path.
    """
    received.append((a, ""))
    return a


async def read(uri: str, receipts: list[Receipt] | None = None) -> object:
    """Read ``uri`` from the joins server: its text, or the error."""
    sink = None if receipts is None else receipts.append
    server = Server("joins", "1", resources=[pair, dotted, both, one], receipts=sink)
    async with McpTestClient(server) as client:
        try:
            return wire(await client.read_resource(uri))["contents"][0]["text"]
        except ProtocolError as exc:
            return exc


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        # Joins: the values alone stay, their join decoded once more climbs.
        ("pair://%2e%2e", "once joined"),  # a = ".%2", b = "e"
        ("both://x/.%2e", "once joined"),  # a = "x/.%2", b = "e"
        ("both://x/.%252e", "once joined"),
        # A value that is '.', or '..', however encoded.
        ("pair://..", "'.'"),  # a = ".", b = "."
        ("one://.", "'.'"),
        ("one://%2e", "'.'"),
        ("one://x/%2E%2E", "'..'"),
        # Look-alikes: compatibility forms that NFKC makes dots and slashes.
        ("one://\uff0e\uff0e", "'..'"),
        ("one://\u2025", "'..'"),
        ("one://\u2024\u2024/x", "'..'"),
        ("one://%EF%BC%8E%EF%BC%8E", "'..'"),
        ("one://a\uff0f\uff0e\uff0e", "'..'"),
        ("pair://\uff0e\uff0e", "'.'"),
        ("one://\uff0fetc", "leading"),
        # Cross-value look-alikes: neither value alone, only the join decoded once
        # more and in NFKC, is '..' (U+FF0E, U+2024, and U+2025 split across values).
        ("pair://\uff0e%252e", "once joined"),  # a = "\uff0e%2", b = "e"
        ("pair://\u2024%252e", "once joined"),
        ("pair://%25E2%2580%25A5", "once joined"),  # a = "%E2%80%A", b = "5"
        ("both://x/\uff0e%252e", "once joined"),
        ("both://x/\u2024%252e", "once joined"),
        ("both://x/%25E2%2580%25A5", "once joined"),
        # Absolute, a backslash, a NUL.
        ("one:///etc", "leading"),
        ("one://C:x", "drive"),
        ("one://a\\b", "'\\'"),
        ("one://a%5Cb", "'\\'"),
        ("one://a%00b", "NUL"),
        # What stays is served.
        ("one://a/./b", None),
        ("one://x.y/..z", None),
        ("pair://ab", None),
        ("dotted://x/.y.z/end", None),
    ],
)
async def test_a_join_or_a_look_alike_that_climbs_never_reaches_the_reader(
    uri: str, why: str | None
) -> None:
    received.clear()
    receipts: list[Receipt] = []
    outcome = await read(uri, receipts)

    if why is None:
        assert isinstance(outcome, str)
        return
    assert isinstance(outcome, ProtocolError), outcome
    assert -32602 == outcome.code
    assert why in outcome.message
    assert [] == received
    assert ["invalid"] == [r.outcome for r in receipts]


def test_two_halves_that_are_dots_do_not_make_a_parent_segment() -> None:
    """The audit's example: ``{a}{b}`` with ``.`` and ``.`` joins to ``..``."""
    template = UriTemplate.parse("pair://{a}{b}", where="test")

    assert template.escape({"a": ".", "b": "."}) is not None
    assert template.escape({"a": "x.", "b": ".y"}) is None
    joined = UriTemplate.parse("both://{+a}{+b}", where="test")
    assert ("a, b", "a '..' path segment once joined") == joined.escape(
        {"a": "x/.", "b": "./y"}
    )


@pytest.mark.parametrize(
    ("template", "a", "b"),
    [
        ("both://{+a}{+b}", "x/\uff0e", "\uff0e/y"),  # the audit's x/\uff0e\uff0e/y
        ("both://{+a}{+b}", "x/\u2024", "\u2024/y"),
        ("both://{+a}{+b}", "x/%E2%80", "%A5/y"),  # U+2025 split in its UTF-8
        ("pair://{a}{b}", "\uff0e%2", "e"),
        ("pair://{a}{b}", "\u2024%2", "e"),
        ("pair://{a}{b}", "%E2%80", "%A5"),
    ],
)
def test_look_alike_halves_that_join_into_a_parent_segment_are_refused(
    template: str, a: str, b: str
) -> None:
    """Each value alone is no escape; only the NFKC form of the joined path is."""
    parsed = UriTemplate.parse(template, where="test")

    assert escaping_variable({"a": a}, parsed.segments) is None
    assert escaping_variable({"b": b}, parsed.segments) is None
    assert ("a, b", "a '..' path segment once joined") == parsed.escape(
        {"a": a, "b": b}
    )


def test_a_template_whose_own_text_climbs_is_the_authors_choice() -> None:
    template = UriTemplate.parse("up://../{a}", where="test")

    assert template.escape({"a": "x"}) is None
    assert template.escape({"a": ".."}) is not None


PIECE = st.sampled_from(
    ["a", ".", "..", "/", "%2e", "%2F", "\uff0e", "\u2024", "x.", ".y", "%252e"]
)


def layers(value: str) -> list[str]:
    found = [value]
    while (decoded := urllib.parse.unquote(found[-1])) != found[-1]:
        found.append(decoded)
    return found


def climbs(path: str) -> bool:
    """The oracle, read independently: any decoding (and its NFKC form) of the
    joined path holds a '..' segment, or a value is '.'."""
    for layer in layers(path):
        for form in (layer, unicodedata.normalize("NFKC", layer)):
            if ".." in form.replace("\\", "/").split("/"):
                return True
    return False


@settings(max_examples=80, deadline=None)
@example(a="x/\uff0e%25", b="2e")
@example(a="x/\u2024%25", b="2e")
@example(a="x/%25E2%2580", b="%25A5")
@example(a="\uff0e%25", b="2e")
@given(
    a=st.lists(PIECE, min_size=1, max_size=4).map("".join),
    b=st.lists(PIECE, min_size=1, max_size=4).map("".join),
)
def test_a_joined_path_that_climbs_is_always_refused(a: str, b: str) -> None:
    """Property: over real JSON, ``both://{+a}{+b}`` and ``pair://{a}{b}``: a read
    whose joined value climbs (at any decoding, in NFKC too) never reaches the
    reader, and what the reader receives never climbs, joined or alone."""
    uris = [f"both://{a}{b}", f"pair://{a}{b}"]

    async def main() -> list[object]:
        return [await read(uri) for uri in uris]

    received.clear()
    outcomes = trio.run(main)
    for uri, outcome in zip(uris, outcomes, strict=True):
        joined = uri.partition("://")[2]
        if climbs(joined):
            assert isinstance(outcome, ProtocolError), (uri, outcome)
    for first, second in received:
        assert not climbs(first + second)
        assert "." not in (first, second)


@pytest.mark.parametrize(
    ("template", "value", "why"),
    [
        ("many://{+a}", "x/../y", "a '..' path segment"),
        ("one://{a}", ".", "the path segment '.'"),
        ("many://{+a}", "x\x00y", "a NUL character"),
        ("one://{a}", "x/y", "a '/' or '\\' inside a single path segment"),
        ("many://{+a}", "/etc/passwd", "a leading '/' or '\\'"),
        ("many://{+a}", "C:x", "a drive letter"),
        ("many://{+a}", "x\\y", "a '\\' (a Windows path separator)"),
    ],
)
def test_each_escape_is_named_by_what_the_value_holds(
    template: str, value: str, why: str
) -> None:
    """The reason a read is refused (-32602) names the variable and what it holds."""
    assert ("a", why) == UriTemplate.parse(template, where="test").escape({"a": value})


NAMES = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_]{0,5}\Z")


@example(names=["Xa", "Xb"])
@given(names=st.lists(NAMES, min_size=2, max_size=2, unique=True))
def test_values_join_whatever_the_variables_are_called(names: list[str]) -> None:
    a, b = names
    template = UriTemplate.parse(f"both://{{+{a}}}{{+{b}}}", where="test")

    assert (f"{a}, {b}", "a '..' path segment once joined") == template.escape(
        {a: "x/.", b: "./y"}
    )
    assert template.escape({a: "x/", b: "./y"}) is None
