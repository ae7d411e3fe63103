"""A server whose tool takes and returns pydantic models, for the official client's
test over stdio (``trio-mcp run tests/declare/pydantic_server.py:server``)."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic
from pydantic import BaseModel

from trio_mcp import Secret, Server, tool


class Condition(BaseModel):
    """One condition on a ticket."""

    field: Literal["title", "owner"]
    words: list[str] = pydantic.Field(min_length=1)


class Query(BaseModel):
    conditions: list[Condition]
    limit: int = pydantic.Field(10, ge=1, le=50, description="Most results.")
    api_key: Secret[str] | None = None


class Hit(BaseModel):
    id: str
    title: str
    score: float = pydantic.Field(ge=0)


class Hits(BaseModel):
    hits: list[Hit]
    key_seen: Secret[str] | None = None


@tool
def find(
    query: Query,
    page: Annotated[int, pydantic.Field(ge=1, description="The page, from 1.")] = 1,
) -> Hits:
    """
    Find tickets matching every condition.

    Args:
        query: What to look for.
    """
    words = [w for c in query.conditions for w in c.words]
    hits = [Hit(id=f"T-{page}-{i}", title=w, score=1.0) for i, w in enumerate(words)]
    return Hits(hits=hits[: query.limit], key_seen=query.api_key)


server = Server("pydantic-desk", "1.0.0", tools=[find])
