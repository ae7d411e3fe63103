"""The JSON layer every transport shares: strict decoding, compact encoding, depth.

``depth_exceeds`` is checked against a plain recursive definition of depth over
generated documents, and ``could_exceed`` (the fast pre-check) must never say "no"
when the walk would say "yes".
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.strategies import json_trees

from trio_mcp._json import (
    DuplicateKey,
    JsonValue,
    could_exceed,
    depth_exceeds,
    dumps,
    encode_message,
    loads,
)

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
documents = json_trees(scalars, st.text(max_size=3), max_leaves=40)


def depth(value: Any) -> int:
    """Nesting of arrays and objects: a scalar is 0, ``[]`` and ``{}`` are 1."""
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


@given(documents, st.integers(min_value=0, max_value=12))
def test_depth_exceeds_agrees_with_the_recursive_definition(
    value: JsonValue, limit: int
) -> None:
    assert (depth(value) > limit) == depth_exceeds(value, limit)


@given(documents, st.integers(min_value=0, max_value=12))
def test_the_bracket_count_never_misses_a_deep_document(
    value: JsonValue, limit: int
) -> None:
    text = dumps(value)
    if depth_exceeds(value, limit):
        assert could_exceed(text, limit)
        assert could_exceed(text.encode(), limit)


@pytest.mark.parametrize("text", ["[[1]]", "{}", "[{}]", '{"a":[]}'])
def test_the_bracket_count_is_exact_at_the_boundary(text: str) -> None:
    brackets = text.count("[") + text.count("{")

    assert could_exceed(text, brackets - 1)
    assert not could_exceed(text, brackets)
    assert could_exceed(text.encode(), brackets - 1)
    assert not could_exceed(text.encode(), brackets)


@pytest.mark.parametrize(
    ("value", "limit", "deeper"),
    [
        (1, 0, False),
        ([], 0, True),
        ([], 1, False),
        ({}, 0, True),
        ({}, 1, False),
        ([[]], 1, True),
        ({"a": {}}, 1, True),
        ([{"a": [1]}], 2, True),
        ([{"a": [1]}], 3, False),
        ([1, [2, [3]]], 3, False),
        ({"a": 1, "b": {"c": {}}}, 2, True),
    ],
)
def test_depth_exceeds_table(value: JsonValue, limit: int, deeper: bool) -> None:
    assert deeper == depth_exceeds(value, limit)


@given(documents)
def test_dumps_is_compact_and_loads_reads_it_back(value: JsonValue) -> None:
    text = dumps(value)

    assert value == loads(text)
    assert value == loads(text.encode())
    assert "\n" not in text
    assert json.dumps(value, separators=(",", ":"), ensure_ascii=False) == text


def test_dumps_keeps_non_ascii_text_as_is() -> None:
    assert '{"name":"Zoë ✓"}' == dumps({"name": "Zoë ✓"})


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_dumps_refuses_nan_and_infinity(number: float) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps({"x": number})


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_loads_refuses_nan_and_infinity(constant: str) -> None:
    with pytest.raises(ValueError, match=f"^{constant} is not JSON$"):
        loads(f'{{"x":{constant}}}')
    with pytest.raises(ValueError, match=f"^{constant} is not JSON$"):
        loads(f"[{constant}]".encode())


def test_loads_refuses_invalid_utf8() -> None:
    with pytest.raises(UnicodeDecodeError):
        loads(b'"\xff"')


# -- encode_message: the bytes every transport writes ------------------------------------
texts_with_surrogates = st.text(
    st.characters(codec=None, exclude_categories=()), max_size=8
)


@given(
    st.recursive(
        scalars | texts_with_surrogates,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(texts_with_surrogates, inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_encode_message_writes_valid_utf8_that_reads_back_as_the_value(
    value: JsonValue,
) -> None:
    """Lone surrogates included: they travel as ``\\uXXXX`` escapes."""
    body = encode_message(value)

    text = body.decode("utf-8")  # strict: raises on anything that is not UTF-8
    assert "\n" not in text
    assert value == json.loads(text)


def test_encode_message_keeps_text_as_is_unless_a_surrogate_forces_escapes() -> None:
    assert '{"a":"é ✓"}'.encode() == encode_message({"a": "é ✓"})
    assert b'{"a":"\\u00e9 \\ud800"}' == encode_message({"a": "é \ud800"})


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_encode_message_refuses_nan_and_infinity(number: float) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode_message({"x": [number]})


# -- a member name twice in one object ----------------------------------------------------
@attrs.frozen
class Members:
    """A JSON object as written: its members in order, a name possibly repeated."""

    pairs: tuple[tuple[str, Any], ...]


def written(tree: Any) -> str:
    """``tree`` as JSON text, each ``Members`` with every member it holds."""
    if isinstance(tree, Members):
        inner = ",".join(f"{json.dumps(k)}:{written(v)}" for k, v in tree.pairs)
        return "{" + inner + "}"
    if isinstance(tree, list):
        return "[" + ",".join(written(v) for v in tree) + "]"
    return json.dumps(tree)


def repeated(tree: Any) -> set[str]:
    """The names some object of ``tree`` holds twice (the oracle, by counting)."""
    found: set[str] = set()
    children: list[Any] = tree if isinstance(tree, list) else []
    if isinstance(tree, Members):
        names = [k for k, _ in tree.pairs]
        found |= {k for k in names if names.count(k) > 1}
        children = [v for _, v in tree.pairs]
    for child in children:
        found |= repeated(child)
    return found


#: Few names, so objects often repeat one; text too (escapes, surrogates).
NAMES = st.sampled_from(["id", "method", "a", "", "\ud800"]) | st.text(max_size=3)
trees = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(st.tuples(NAMES, inner), max_size=4).map(
            lambda pairs: Members(tuple(pairs))
        )
    ),
    max_leaves=20,
)


@example(Members((("method", "tools/call"), ("method", "tools/list"))))
@example(Members((("params", Members((("a", 1), ("b", [Members((("a", 2),))])))),)))
@example(
    [Members((("x", 1),)), Members((("x", 2), ("y", Members((("y", 3), ("y", 4))))))]
)
@given(trees)
def test_a_repeated_name_is_always_refused_and_nothing_else_is(tree: Any) -> None:
    """Property: ``loads`` refuses a text exactly when an object in it names a member
    twice (``DuplicateKey``, naming one such name), and otherwise reads what the
    standard parser reads; it never fails another way."""
    text = written(tree)
    names = repeated(tree)
    if names:
        with pytest.raises(DuplicateKey) as refused:
            loads(text)
        assert refused.value.key in names
    else:
        assert json.loads(text) == loads(text)


def test_a_long_repeated_name_is_cut_in_the_message() -> None:
    name = "k" * 500
    with pytest.raises(DuplicateKey) as refused:
        loads(f'{{"{name}":1,"{name}":2}}')

    assert name == refused.value.key
    assert len(str(refused.value)) < 120
