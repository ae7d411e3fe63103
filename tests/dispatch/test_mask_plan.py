"""The structural mask's schema plan: each place's branches resolved once.

``mask_structured`` walks structured content beside its output schema. It used to
resolve the schema's branches (``$ref``, ``anyOf``/``oneOf``/``allOf``) again at
every node of every reply; it now resolves each place once per schema (``_Plan``).
The property holds the two walks equal, the old one kept here as the oracle, for
arbitrary schemas (refs, branches that disagree, boolean and missing schemas) and
values, masking errors included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from trio_mcp._dispatch._mask import MaskingFailed, mask_structured, text_mask

CHARS = st.one_of(st.sampled_from('"\\\x00\x7fé😀\ud800*'), st.characters())
TEXT = st.text(CHARS, max_size=6)


def _resolve(schema: Any, root: Any) -> Any:
    for _ in range(8):
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        target = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        schema = target
    return schema


def _branches(schema: Any, root: Any) -> list[Any]:
    found: list[Any] = []
    pending = [schema]
    while pending and len(found) < 64:
        current = _resolve(pending.pop(), root)
        if not isinstance(current, dict):
            continue
        found.append(current)
        for key in ("anyOf", "oneOf", "allOf"):
            more = current.get(key)
            if isinstance(more, list):
                pending.extend(more)
    return found


def per_node_walk(value: Any, schema: Any, root: Any, mask: Any) -> Any:
    """The structural walk as it was: every node's branches resolved again."""
    branches = _branches(schema, root)
    if isinstance(value, str):
        for b in branches:
            enum = b.get("enum")
            if (isinstance(enum, list) and value in enum) or b.get("const") == value:
                return value
        return mask(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            named = any(
                (isinstance(b.get("properties"), dict) and key in b["properties"])
                or (isinstance(b.get("required"), list) and key in b["required"])
                for b in branches
            )
            shown = key if named else mask(key)
            if shown in out:
                raise MaskingFailed("merged")
            out[shown] = per_node_walk(item, _property(branches, key), root, mask)
        return out
    if isinstance(value, list):
        return [
            per_node_walk(item, _item(branches, i), root, mask)
            for i, item in enumerate(value)
        ]
    return value


def _property(branches: list[Any], key: str) -> Any:
    for b in branches:
        if isinstance(b.get("properties"), dict) and key in b["properties"]:
            return b["properties"][key]
    for b in branches:
        if isinstance(b.get("additionalProperties"), dict):
            return b["additionalProperties"]
    return None


def _item(branches: list[Any], index: int) -> Any:
    for b in branches:
        prefix = b.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            return prefix[index]
        if isinstance(b.get("items"), dict):
            return b["items"]
    return None


WORDS = ["a", "kind", "é\x7f"]
WORD = st.sampled_from(WORDS)
LEAF_SCHEMAS: st.SearchStrategy[Any] = (
    st.just({})
    | st.booleans()
    | st.none()
    | st.builds(lambda e: {"enum": e}, st.lists(WORD | st.integers(), max_size=3))
    | st.builds(lambda c: {"const": c}, WORD | st.integers())
    | st.sampled_from([{"$ref": "#/$defs/D"}, {"$ref": "#/$defs/E"}, {"$ref": "#/x"}])
)


def _schema(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyed = st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(WORD, inner, max_size=3),
            "required": st.lists(WORD | st.integers(), max_size=2),
            "additionalProperties": inner,
            "items": inner,
            "prefixItems": st.lists(inner, max_size=3),
            "anyOf": st.lists(inner, max_size=3),
            "oneOf": st.lists(inner, max_size=2),
            "allOf": st.lists(inner, max_size=2),
            "enum": st.lists(WORD, max_size=2),
        },
    )
    return keyed | st.lists(inner, max_size=2)


SCHEMAS = st.recursive(LEAF_SCHEMAS, _schema, max_leaves=12)
VALUES = st.recursive(
    st.none() | st.integers() | WORD | TEXT,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(WORD, inner, max_size=3)
        | st.dictionaries(TEXT, inner, max_size=2)
    ),
    max_leaves=16,
)


#: Branches that disagree: which one speaks first must not change.
_TWO_SAY = {
    "anyOf": [
        {"properties": {"a": {"enum": ["x"]}}, "prefixItems": [{"const": "x"}]},
        {"properties": {"a": {}}, "items": {}, "additionalProperties": {}},
        {"additionalProperties": {"const": "x"}, "items": {"enum": ["x"]}},
    ]
}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(_TWO_SAY, {}, {"a": "x", "b": "x"}, ["x"])
@example({"$ref": "#/$defs/D"}, _TWO_SAY, {"a": "x", "b": "x"}, ["x"])
@example({"items": _TWO_SAY}, {}, [["x", "x"], {"a": "x", "x": "x"}], ["x"])
@example({"$ref": "#/$defs/D"}, _TWO_SAY["anyOf"][::-1], [{"a": "x"}], ["x"])
@given(
    SCHEMAS,
    SCHEMAS,
    VALUES,
    st.lists(WORD | TEXT | st.just("\x7f"), min_size=1, max_size=3),
)
def test_the_plan_walks_as_the_per_node_resolution_did(
    schema: Any, define: Any, value: Any, secrets: list[str]
) -> None:
    root: Any = (
        {**schema, "$defs": {"D": define, "E": schema}}
        if isinstance(schema, dict)
        else schema
    )
    mask = text_mask(tuple(sorted(secrets, key=len, reverse=True)))
    base = root if isinstance(root, dict) else {}
    try:
        expected = per_node_walk(value, root, base, mask)
    except MaskingFailed:
        with pytest.raises(MaskingFailed):
            mask_structured(value, root, mask)
        return
    assert mask_structured(value, root, mask) == expected
    assert mask_structured(value, root, mask) == expected  # the kept plan
