"""Whether two URI templates can match one URI, and a URI both match.

Two resource templates that both match a URI leave which one serves it to the order
of ``resources=``, which a reader of either declaration cannot see; so a catalog
refuses them (F9, issue 44). A template is a sequence of literal characters and
variables: ``{name}`` matches one or more characters other than ``/``, ``?`` and
``#``, ``{+name}`` one or more other than ``?`` and ``#`` (``UriTemplate``). Each is a
small automaton; the two run side by side over every character that can tell them
apart (their literals, the three separators, and one character neither names), so
the search is exact and ends: a breadth-first walk over the pairs of state sets the
two reach (finitely many), which finds a shortest shared URI when there is one.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Final

__all__ = ["overlapping", "shared_uri"]

_VAR: Final = re.compile(r"\{(\+?)[^{}]*\}")
#: What a variable may not match: ``{name}`` (a segment) and ``{+name}``.
_SEGMENT_STOPS: Final = frozenset("/?#")
_RESERVED_STOPS: Final = frozenset("?#")

#: A token: a literal character, or the characters a variable may not match.
Token = str | frozenset[str]
#: A state: the token about to be matched, and whether a variable is under way.
State = tuple[int, bool]


def _tokens(template: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    for m in _VAR.finditer(template):
        tokens.extend(template[pos : m.start()])
        tokens.append(_RESERVED_STOPS if m.group(1) else _SEGMENT_STOPS)
        pos = m.end()
    tokens.extend(template[pos:])
    return tokens


def _closed(states: set[State], tokens: list[Token]) -> frozenset[State]:
    """``states`` and where a variable under way may end (before the next token)."""
    return frozenset(states | {(i + 1, False) for i, inside in states if inside})


def _step(states: frozenset[State], tokens: list[Token], char: str) -> frozenset[State]:
    after: set[State] = set()
    for i, _ in states:
        if i == len(tokens):
            continue
        token = tokens[i]
        if isinstance(token, str):
            if token == char:
                after.add((i + 1, False))
        elif char not in token:
            after.add((i, True))
    return _closed(after, tokens)


def _accepts(states: frozenset[State], tokens: list[Token]) -> bool:
    return (len(tokens), False) in states


def shared_uri(a: str, b: str) -> str | None:
    """A URI both templates match, or None if no URI matches both."""
    ta, tb = _tokens(a), _tokens(b)
    literals = {t for t in (*ta, *tb) if isinstance(t, str)}
    neither = next(c for c in "xyz0123456789_~" + chr(0xE000) if c not in literals)
    # A character neither template names first: the example reads like a value.
    alphabet = [neither, *sorted(literals | {"/", "?", "#"})]
    start = (_closed({(0, False)}, ta), _closed({(0, False)}, tb))
    seen = {start: ""}
    queue = deque([start])
    while queue:
        pair = queue.popleft()
        if _accepts(pair[0], ta) and _accepts(pair[1], tb):
            return seen[pair]
        for char in alphabet:
            nxt = (_step(pair[0], ta, char), _step(pair[1], tb, char))
            if nxt[0] and nxt[1] and nxt not in seen:
                seen[nxt] = seen[pair] + char
                queue.append(nxt)
    return None


def overlapping(resources: Iterable[tuple[str, str]]) -> list[str]:
    """A problem for each two templates (URI template, declaration) that can match
    one URI: which one serves it would depend on the order of ``resources=``. A
    static URI (no ``{``) is left out: it always comes before the templates."""
    listed = [(uri, where) for uri, where in resources if "{" in uri]
    found = []
    for i, (first, where) in enumerate(listed):
        for second, other in listed[i + 1 :]:
            uri = shared_uri(first, second)
            if uri is not None:
                found.append(
                    f"resource templates '{first}' ({where}) and '{second}' ({other}) "
                    f"both match '{uri}'; change one (another scheme or a literal "
                    "part) so that each URI has one reader"
                )
    return found
