"""Hypothesis strategies several test folders draw from."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["json_trees"]


def json_trees(
    leaves: st.SearchStrategy[Any],
    keys: st.SearchStrategy[str] | None = None,
    *,
    width: int = 3,
    max_leaves: int = 10,
) -> st.SearchStrategy[Any]:
    """JSON values built of ``leaves``: arrays and objects (their keys from
    ``keys``, short texts by default) of at most ``width`` members, nested."""
    names = st.text(max_size=8) if keys is None else keys
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=width)
            | st.dictionaries(names, inner, max_size=width)
        ),
        max_leaves=max_leaves,
    )
