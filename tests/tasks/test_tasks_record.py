"""A task's questions and answers, property-based: keys unique over the task's life,
partial answers, all-or-nothing updates (SEP-2663 "Task Update Requests")."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import Elicit, ElicitResult
from trio_mcp._tasks._record import BadResponses, TaskRecord

KEYS = st.sampled_from(["a", "b", "c", "a#2", "d"])
ACCEPT: Any = {"action": "accept", "content": {"ok": True}}
BAD: Any = {"action": "accept", "content": {"ok": "not a boolean"}}


@attrs.frozen
class Confirm:
    ok: bool


ASK = Elicit("Confirm?", schema=Confirm)


def status_of(task: TaskRecord) -> str:
    """The status, read afresh (mypy would keep an earlier assert's narrowing)."""
    return task.status


def record() -> TaskRecord:
    return TaskRecord("t", None, ttl_ms=60_000, poll_ms=500)


@given(
    rounds=st.lists(st.sets(KEYS, min_size=1), min_size=1, max_size=6),
    data=st.data(),
)
def test_wire_keys_are_unique_and_every_round_ends_when_all_are_answered(
    rounds: list[set[str]], data: st.DataObject
) -> None:
    task = record()
    shown: list[str] = []
    for keys in rounds:
        task.ask(dict.fromkeys(sorted(keys), ASK))
        wire_keys: list[str] = list(task.view()["inputRequests"])  # type: ignore[arg-type]
        shown.extend(wire_keys)
        assert "input_required" == status_of(task)
        order = data.draw(st.permutations(wire_keys))
        cut = data.draw(st.integers(1, len(order)))
        first, rest = order[:cut], order[cut:]
        task.answer({**dict.fromkeys(first, ACCEPT), "never-asked": ACCEPT})
        if rest:
            assert "input_required" == status_of(task)
            assert set(rest) == set(task.view()["inputRequests"])  # type: ignore[arg-type]
            assert not task.answered.is_set()
            task.answer(dict.fromkeys(rest, ACCEPT))
        assert "working" == status_of(task)
        assert task.answered.is_set()
        assert keys == set(task.answers)
        assert all(isinstance(a, ElicitResult) for a in task.answers.values())
    assert len(shown) == len(set(shown))


@given(keys=st.sets(KEYS, min_size=2), data=st.data())
def test_an_update_with_one_bad_answer_takes_nothing(
    keys: set[str], data: st.DataObject
) -> None:
    task = record()
    task.ask(dict.fromkeys(sorted(keys), ASK))
    wire_keys = list(task.pending)
    bad = data.draw(st.sampled_from(wire_keys))
    update = {k: (BAD if k == bad else ACCEPT) for k in wire_keys}

    with pytest.raises(BadResponses) as caught:
        task.answer(update)

    assert [f"inputResponses.{bad}.content.ok"] == [
        p.path for p in caught.value.problems
    ]
    assert set(wire_keys) == set(task.pending)
    assert {} == task.answers
    assert "input_required" == status_of(task)


def test_a_terminal_status_is_final() -> None:
    task = record()
    task.set_status("cancelled")
    task.set_status("completed")

    assert "cancelled" == status_of(task)
    assert "inputRequests" not in task.view()
