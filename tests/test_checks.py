"""Misuse of a public constructor is one ``McpError.InvalidArgument`` (issue 37): the
checks of ``trio_mcp._checks``, as every public constructor uses them.

For each public value and configuration class, a table gives well-formed keyword
arguments and, per argument, values that cannot work. Two properties hold:

- one bad argument among good ones is refused with ``InvalidArgument``: never
  accepted silently, never another exception type;
- any mix of good and arbitrary values is either built or refused with
  ``InvalidArgument`` (never a bare ``TypeError``, ``AttributeError``, ...).

``InvalidArgument`` is also a ``ValueError`` and a ``TypeError``, so code that caught
what these constructors raised before keeps working; the message names the class or
argument.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trio_mcp import (
    BlobResourceContents,
    Capability,
    Elicit,
    ElicitUrl,
    EmbeddedResource,
    Field,
    Icon,
    ImageContent,
    InvalidArgument,
    Limits,
    MemoryStore,
    NeedsInput,
    PromptArgument,
    PromptMessage,
    PromptSpec,
    ProtectedResource,
    RateLimit,
    RedisBroadcast,
    RedisStore,
    ResourceLink,
    ResourceSpec,
    Sample,
    Secret,
    Server,
    ServerInfo,
    Skill,
    TextContent,
    TextResourceContents,
    ToolHints,
    ToolSpec,
)
from trio_mcp.auth import BearerAuth, Introspection

CAP = Capability("desk.read", description="Read the desk.")
KEY = "k" * 32


@attrs.frozen
class Form:
    email: str


# -- what cannot work, by kind --------------------------------------------------------
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([math.nan, math.inf, -math.inf, -1.5, 0.0, 2.5]),
    st.text(max_size=4),
    st.binary(max_size=3),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(0, 2), max_size=2),
    st.builds(object),
)


def not_(*kinds: type) -> st.SearchStrategy[object]:
    """Junk that is none of ``kinds`` (``bool`` never counts as ``int``)."""
    return junk.filter(
        lambda v: (
            (isinstance(v, bool) and bool not in kinds) or not isinstance(v, kinds)
        )
    )


NOT_STR = not_(str)
NOT_OPT_STR = not_(str, type(None))
NOT_OPT_BOOL = not_(bool, type(None))
NOT_BOOL = not_(bool)
NOT_DICT = not_(dict)
NOT_OPT_DICT = not_(dict, type(None))
BAD_COUNT_1 = st.integers(max_value=0) | not_(int)
BAD_COUNT_0 = st.integers(max_value=-1) | not_(int)
BAD_OPT_INT = not_(int, type(None))
BAD_OPT_NUMBER = not_(int, float, type(None)) | st.sampled_from([math.nan, math.inf])
BAD_SECONDS = st.sampled_from([-1, -0.5, math.nan, "1", None, True, [1]])
BAD_POSITIVE_SECONDS = BAD_SECONDS | st.just(0)
BAD_FINITE_POSITIVE = BAD_POSITIVE_SECONDS | st.just(math.inf)
BAD_STR_LIST = st.sampled_from(["abc", 5, [1], None, [None], {"a": 1}])
BAD_URL = st.sampled_from(
    ["", "auth.example.com", "ftp://x.example", 5, None, "http://["]
)

# -- the table ------------------------------------------------------------------------
Build = Callable[..., object]


@attrs.frozen
class Case:
    build: Build
    good: Mapping[str, Any]
    bad: Mapping[str, st.SearchStrategy[object]]


CASES: dict[str, Case] = {
    "Capability": Case(
        lambda **kw: Capability(kw.pop("name"), **kw),
        {"name": "desk.write", "description": "Write.", "requires": [CAP]},
        {
            "name": NOT_STR | st.sampled_from(["", "a b", "a/b"]),
            "description": NOT_STR,
            "requires": st.sampled_from([5, "desk", ["desk"], [None]]),
        },
    ),
    "Limits": Case(
        Limits,
        {
            "max_message_bytes": 1024,
            "max_depth": 8,
            "max_concurrent": 2,
            "max_waiting": 0,
            "max_listens": 1,
            "grace_period": 0,
            "keepalive_interval": timedelta(seconds=2),
            "idle_timeout": 1.5,
            "body_timeout": 3,
        },
        {
            "max_message_bytes": BAD_COUNT_1,
            "max_depth": BAD_COUNT_1,
            "max_concurrent": BAD_COUNT_1,
            "max_waiting": BAD_COUNT_0,
            "max_listens": BAD_COUNT_1,
            "grace_period": BAD_SECONDS,
            "keepalive_interval": BAD_POSITIVE_SECONDS,
            "idle_timeout": BAD_POSITIVE_SECONDS,
            "body_timeout": BAD_POSITIVE_SECONDS,
        },
    ),
    "RateLimit": Case(
        lambda **kw: RateLimit(kw.pop("calls"), kw.pop("per"), **kw),
        {"calls": 10, "per": 60, "burst": None, "trusted_proxies": ["10.0.0.0/8"]},
        {
            "calls": BAD_COUNT_1,
            "per": BAD_FINITE_POSITIVE,
            "burst": st.integers(max_value=0) | not_(int, type(None)),
            "trusted_proxies": st.sampled_from([5, ["proxy"], [None], [5]]),
        },
    ),
    "Icon": Case(
        lambda **kw: Icon(kw.pop("src"), **kw),
        {
            "src": "data:,",
            "mime_type": "image/png",
            "sizes": ["48x48"],
            "theme": "dark",
        },
        {
            "src": NOT_STR,
            "mime_type": NOT_OPT_STR,
            "sizes": BAD_STR_LIST,
            "theme": NOT_OPT_STR | st.sampled_from(["blue", "Dark"]),
        },
    ),
    "ToolHints": Case(
        ToolHints,
        {"read_only": True, "destructive": False, "idempotent": None, "title": "T"},
        {
            "read_only": NOT_OPT_BOOL,
            "destructive": NOT_OPT_BOOL,
            "idempotent": NOT_OPT_BOOL,
            "open_world": NOT_OPT_BOOL,
            "title": NOT_OPT_STR,
        },
    ),
    "Field": Case(
        Field,
        {"description": "d", "min_length": 1, "ge": 0, "lt": 2.5, "json_schema": {}},
        {
            "description": NOT_OPT_STR,
            "min_length": BAD_OPT_INT,
            "max_items": BAD_OPT_INT,
            "pattern": NOT_OPT_STR,
            "ge": BAD_OPT_NUMBER,
            "lt": BAD_OPT_NUMBER,
            "json_schema": NOT_OPT_DICT,
        },
    ),
    "Secret": Case(
        lambda **kw: Secret(kw["value"]),
        {"value": "s3cret"},
        {"value": st.just(Secret("inner"))},
    ),
    "MemoryStore": Case(MemoryStore, {"max_keys": 10}, {"max_keys": BAD_COUNT_1}),
    "RedisStore": Case(
        lambda **kw: RedisStore(kw.pop("url"), **kw),
        {"url": "redis://127.0.0.1:1/0", "prefix": "p", "timeout": 1, "heartbeat": 2.5},
        {
            "url": NOT_STR | st.sampled_from(["http://x", "127.0.0.1:6379"]),
            "prefix": NOT_STR,
            "timeout": BAD_FINITE_POSITIVE,
            "heartbeat": BAD_FINITE_POSITIVE,
        },
    ),
    "RedisBroadcast": Case(
        lambda **kw: RedisBroadcast(kw.pop("url"), **kw),
        {
            "url": "unix:///tmp/r.sock",
            "channel": "c",
            "buffer_size": 4,
            "outage_grace": 0,
            "max_unsent": 1,
            "reconnect_delay": 0.5,
            "max_reconnect_delay": 1,
        },
        {
            "url": NOT_STR | st.just("http://x"),
            "channel": NOT_STR,
            "buffer_size": BAD_COUNT_1,
            "outage_grace": BAD_SECONDS | st.just(math.inf),
            "max_unsent": BAD_COUNT_1,
            "reconnect_delay": BAD_FINITE_POSITIVE,
            "max_reconnect_delay": BAD_FINITE_POSITIVE,
        },
    ),
    "ProtectedResource": Case(
        ProtectedResource,
        {
            "authorization_servers": ["https://auth.example.com"],
            "scopes_supported": ["mcp:tools"],
            "resource": "https://mcp.example.com/mcp",
            "resource_name": "Desk",
            "resource_documentation": None,
        },
        {
            "authorization_servers": BAD_STR_LIST | BAD_URL.map(lambda u: [u]),
            "scopes_supported": BAD_STR_LIST,
            "resource": BAD_URL.filter(lambda u: u is not None),
            "resource_name": NOT_OPT_STR,
            "resource_documentation": NOT_OPT_STR,
        },
    ),
    "BearerAuth": Case(
        lambda **kw: BearerAuth(kw.pop("issuer"), kw.pop("audience"), **kw),
        {
            "issuer": "https://auth.example.com",
            "audience": "https://mcp.example.com/mcp",
            "scopes": {"desk:read": [CAP]},
            "required_scopes": ["mcp"],
            "algorithms": ["RS256"],
            "leeway": 0,
            "hide_ungranted": True,
            "timeout": 1,
        },
        {
            "issuer": BAD_URL,
            "audience": BAD_URL,
            "scopes": st.sampled_from([5, ["desk:read"], {"desk:read": "cap"}]),
            "required_scopes": BAD_STR_LIST,
            "jwks_uri": BAD_URL.filter(lambda u: u is not None),
            "algorithms": BAD_STR_LIST.filter(lambda v: v is not None)
            | st.just(["HS256"]),
            "leeway": BAD_SECONDS | st.just(math.inf),
            "hide_ungranted": NOT_BOOL,
            "timeout": BAD_FINITE_POSITIVE,
        },
    ),
    "Introspection": Case(
        Introspection,
        {"client_id": "rs", "client_secret": "s3cret", "cache_ttl": 0},
        {
            "client_id": NOT_STR,
            "client_secret": not_(str, Secret),
            "endpoint": BAD_URL.filter(lambda u: u is not None),
            "cache_ttl": BAD_SECONDS | st.just(math.inf),
        },
    ),
    "Skill.from_directory": Case(
        lambda **kw: Skill.from_directory(kw["path"]),
        {"path": "skills/desk"},
        {"path": not_(str) | st.just("")},
    ),
    "TextContent": Case(TextContent, {"text": "hi"}, {"text": NOT_STR}),
    "ImageContent": Case(
        ImageContent,
        {"data": b"\x89PNG", "mime_type": "image/png"},
        {"data": not_(bytes), "mime_type": NOT_STR},
    ),
    "ResourceLink": Case(
        ResourceLink,
        {"uri": "desk://1", "name": "one", "description": None, "mime_type": None},
        {
            "uri": NOT_STR,
            "name": NOT_STR,
            "description": NOT_OPT_STR,
            "mime_type": NOT_OPT_STR,
        },
    ),
    "TextResourceContents": Case(
        TextResourceContents,
        {"uri": "desk://1", "text": "one", "meta": {"ui": {}}},
        {"uri": NOT_STR, "text": NOT_STR, "meta": NOT_OPT_DICT},
    ),
    "BlobResourceContents": Case(
        BlobResourceContents,
        {"uri": "desk://1", "blob": b"1"},
        {"uri": NOT_STR, "blob": not_(bytes), "mime_type": NOT_OPT_STR},
    ),
    "EmbeddedResource": Case(
        EmbeddedResource,
        {"resource": TextResourceContents("desk://1", "one")},
        {"resource": junk | st.just(TextContent("x"))},
    ),
    "PromptMessage": Case(
        PromptMessage,
        {"role": "user", "content": TextContent("hi")},
        {
            "role": NOT_STR | st.sampled_from(["system", "User"]),
            "content": junk | st.just({"type": "text", "text": "x"}),
        },
    ),
    "ToolSpec": Case(
        ToolSpec,
        {
            "name": "t",
            "description": None,
            "input_schema": {"type": "object"},
            "output_schema": None,
            "title": None,
            "annotations": ToolHints(),
            "icons": [Icon("data:,")],
            "caps": [CAP],
            "timeout": 1,
            "task": None,
            "task_start": "call",
        },
        {
            "name": NOT_STR,
            "description": NOT_OPT_STR,
            "input_schema": NOT_DICT,
            "output_schema": NOT_OPT_DICT,
            "title": NOT_OPT_STR,
            "annotations": junk.filter(lambda v: v is not None),
            "icons": st.sampled_from([5, "icon", [5], [None]]),
            "caps": st.sampled_from([5, "desk.read", ["desk.read"]]),
            "timeout": BAD_SECONDS.filter(lambda v: v is not None) | st.just(math.inf),
            "task": NOT_OPT_STR | st.just("always"),
            "task_start": NOT_STR | st.just("later"),
        },
    ),
    "ResourceSpec": Case(
        ResourceSpec,
        {"uri": "desk://{id}", "name": "n", "ttl": 5, "updatable": True, "meta": {}},
        {
            "uri": NOT_STR,
            "name": NOT_STR,
            "ttl": BAD_SECONDS.filter(lambda v: v is not None),
            "updatable": NOT_BOOL,
            "meta": not_(dict, type(None)).filter(lambda v: not isinstance(v, Mapping)),
            "complete": st.sampled_from([5, "fn", [1]]),
        },
    ),
    "PromptSpec": Case(
        PromptSpec,
        {"name": "p", "description": "d", "arguments": [PromptArgument("topic")]},
        {
            "name": NOT_STR,
            "description": NOT_OPT_STR,
            "arguments": st.sampled_from([5, "topic", ["topic"], [None]]),
        },
    ),
    "PromptArgument": Case(
        PromptArgument,
        {"name": "topic", "description": None, "required": True},
        {"name": NOT_STR, "description": NOT_OPT_STR, "required": NOT_BOOL},
    ),
    "NeedsInput": Case(
        NeedsInput,
        {"requests": {"email": Elicit("Your email?", Form)}, "state": {"n": 1}},
        {
            "requests": st.sampled_from(
                [
                    5,
                    "email",
                    {"": ElicitUrl("m", "u")},
                    {"a": "Elicit"},
                    {1: ElicitUrl("m", "u")},
                ]
            ),
            "state": st.sampled_from([object(), {"a": b"b"}, {"a": {1, 2}}]),
        },
    ),
    "Elicit": Case(
        Elicit,
        {"message": "Your email?", "schema": Form},
        {"message": NOT_STR, "schema": junk | st.just(int)},
    ),
    "ElicitUrl": Case(
        ElicitUrl,
        {"message": "Sign in", "url": "https://x.example"},
        {"message": NOT_STR, "url": NOT_STR},
    ),
    "Sample": Case(
        lambda **kw: Sample(kw.pop("messages"), kw.pop("max_tokens"), **kw),
        {
            "messages": ["hi"],
            "max_tokens": 5,
            "system_prompt": None,
            "temperature": 0.5,
            "stop_sequences": ["\n"],
            "model_preferences": None,
            "metadata": {},
        },
        {
            "messages": st.sampled_from([5, [], [5], [None]]),
            "max_tokens": BAD_COUNT_1,
            "system_prompt": NOT_OPT_STR,
            "temperature": BAD_OPT_NUMBER,
            "stop_sequences": BAD_STR_LIST.filter(lambda v: v is not None),
            "model_preferences": NOT_OPT_DICT,
            "metadata": NOT_OPT_DICT,
        },
    ),
    "Server": Case(
        lambda **kw: Server(kw.pop("name"), kw.pop("version"), **kw),
        {
            "name": "desk",
            "version": "1.0",
            "instructions": None,
            "state_key": KEY,
            "middleware": [],
            "info": ServerInfo(title="Desk"),
        },
        {
            "name": NOT_STR,
            "version": NOT_STR,
            "instructions": NOT_OPT_STR,
            "state_key": st.sampled_from([5, "short", [], [KEY, 7]]),
            "middleware": st.sampled_from([5, [5], ["step"]]),
            "info": st.sampled_from([5, "Desk", {"title": "Desk"}]),
        },
    ),
    "ServerInfo": Case(
        ServerInfo,
        {"title": "Desk", "website_url": None, "icons": ()},
        {
            "title": NOT_OPT_STR,
            "website_url": NOT_OPT_STR,
            "icons": st.sampled_from([5, "icon", [None]]),
        },
    ),
}


def build(case: Case, kwargs: Mapping[str, Any]) -> object:
    return case.build(**dict(kwargs))


@pytest.mark.parametrize("name", list(CASES))
def test_the_well_formed_arguments_build(name: str) -> None:
    build(CASES[name], CASES[name].good)


@pytest.mark.parametrize("name", list(CASES))
@given(data=st.data())
def test_one_bad_argument_is_an_invalid_argument(
    name: str, data: st.DataObject
) -> None:
    case = CASES[name]
    field = data.draw(st.sampled_from(sorted(case.bad)), label="argument")
    value = data.draw(case.bad[field], label="value")

    with pytest.raises(InvalidArgument) as refused:
        build(case, {**case.good, field: value})

    assert isinstance(refused.value, ValueError)
    assert isinstance(refused.value, TypeError)
    assert str(refused.value)


@pytest.mark.parametrize("name", list(CASES))
@given(data=st.data())
def test_any_arguments_build_or_are_an_invalid_argument(
    name: str, data: st.DataObject
) -> None:
    case = CASES[name]
    kwargs = {
        field: data.draw(st.just(case.good.get(field)) | junk | case.bad[field])
        for field in sorted(case.bad)
    }
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k in case.good}

    with contextlib.suppress(InvalidArgument):
        build(case, kwargs)
