"""``requestState`` integrity: sealing, binding, expiry, keys (mcp-2026-07-28.md §7.2 rule 4)."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from support import wire
from support.mrtr_server import ALL_CAPS, KEY, greet, make_server

from trio_mcp import NeedsInput, Server, ToolContext, tool
from trio_mcp._protocol._state import (
    ENV_STATE_KEY,
    Binding,
    InvalidState,
    StateKeyRequired,
    StateSealer,
    parse_keys,
    require_shared_key,
    salient_digest,
)
from trio_mcp._protocol._state import _unb64 as _unb64_strict
from trio_mcp.testing import McpTestClient, ProtocolError

ALICE = {"action": "accept", "content": {"name": "Alice"}}
OTHER_KEY = b"o" * 32
HELLO = "Hello, Alice!"
GREETED = (HELLO, HELLO)  # structuredContent, and the text block: the string itself
"""A finished greet: structuredContent, and its compact JSON as the one text block
(api.md, "Replies")."""


@attrs.frozen
class User:
    id: str


async def first_state(server: Server, name: str = "greet", **client: Any) -> str:
    async with McpTestClient(server, client_capabilities=ALL_CAPS, **client) as c:
        result = await c.call_tool(name)
    state: str = wire(result.raw)["requestState"]
    return state


async def retry(
    server: Server,
    state: str,
    name: str = "greet",
    arguments: dict[str, Any] | None = None,
    **client: Any,
) -> tuple[Any, str]:
    """Answer the first round; return the result's structured value and text."""
    async with McpTestClient(server, client_capabilities=ALL_CAPS, **client) as c:
        result = await c.call_tool(
            name, arguments, input_responses={"user_name": ALICE}, request_state=state
        )
    return result.structured, result.text


async def refused(server: Server, state: str, **kw: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        await retry(server, state, **kw)
    return caught.value


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_an_untouched_state_verifies() -> None:
    server = make_server()

    assert await retry(server, await first_state(server)) == GREETED


async def test_the_state_is_a_versioned_token() -> None:
    state = await first_state(make_server())

    assert state.startswith("v2.")
    assert state.count(".") == 2


async def test_a_suffixed_state_is_refused() -> None:
    """The conformance suite's tampering: requestState + '-TAMPERED'."""
    server = make_server()
    error = await refused(server, await first_state(server) + "-TAMPERED")

    assert error.code == -32602
    assert error.message.startswith("invalid requestState")


async def test_a_modified_ciphertext_or_nonce_is_refused() -> None:
    server = make_server()
    version, nonce, sealed = (await first_state(server)).split(".")
    changed = _b64(_flip(_unb64(sealed), 5))
    other_nonce = _b64(_flip(_unb64(nonce), 0))

    assert (await refused(server, f"{version}.{nonce}.{changed}")).code == -32602
    assert (await refused(server, f"{version}.{other_nonce}.{sealed}")).code == -32602


def _flip(mac: bytes, index: int) -> bytes:
    raw = bytearray(mac)
    raw[index] ^= 1
    return bytes(raw)


MAC_FORGERIES = {
    "first byte flipped": lambda mac: _flip(mac, 0),
    "last byte flipped": lambda mac: _flip(mac, -1),
    "truncated by one byte": lambda mac: mac[:-1],
    "truncated to half": lambda mac: mac[:16],
    "truncated to one byte": lambda mac: mac[:1],
    "extended by one byte": lambda mac: mac + b"\x00",
    "repeated": lambda mac: mac + mac,
}


@pytest.mark.parametrize("forge", MAC_FORGERIES.values(), ids=MAC_FORGERIES.keys())
async def test_a_forged_ciphertext_is_refused(forge: Callable[[bytes], bytes]) -> None:
    """Only the whole, unchanged ciphertext and its GCM tag open."""
    server = make_server()
    version, nonce, sealed = (await first_state(server)).split(".")
    forged = f"{version}.{nonce}.{_b64(forge(_unb64(sealed)))}"

    error = await refused(server, forged)

    assert (-32602, DOES_NOT_VERIFY) == (error.code, error.message)


NOT_ISSUED = "invalid requestState: requestState is not a token this server issued"
DOES_NOT_VERIFY = (
    "invalid requestState: requestState does not verify: it was altered, sealed with "
    "a key this server does not hold, or issued for another caller or other arguments"
)
EXPIRED = "invalid requestState: requestState has expired; start the request again"


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "v1",
        "v2.a.b",
        "v1.!!.??",
        "v1.a.b.c",
        "x" * 40,
        "v1..AAAA",
        "v1.e30.",
        "v1.e30.A==",
    ],
)
async def test_garbage_is_refused(junk: str) -> None:
    error = await refused(make_server(), junk)

    assert (-32602, NOT_ISSUED) == (error.code, error.message)


async def test_a_state_that_is_not_a_string_is_refused() -> None:
    async with McpTestClient(make_server(), client_capabilities=ALL_CAPS) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.request(
                "tools/call",
                {
                    "name": "greet",
                    "inputResponses": {"user_name": ALICE},
                    "requestState": 12,
                },
            )

    assert (-32602, "invalid requestState: requestState must be a string") == (
        caught.value.code,
        caught.value.message,
    )


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The wall clock every server reads, frozen; a test moves it by assignment."""
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    return now


@pytest.mark.parametrize(
    ("later", "valid"),
    [(0, True), (599.999, True), (600, False), (601, False), (86_400, False)],
)
async def test_a_state_is_valid_for_exactly_its_ttl(
    clock: list[float], later: float, valid: bool
) -> None:
    """Our choice: 600 s; at the expiry instant the state is already refused."""
    server = make_server()
    state = await first_state(server)
    clock[0] += later

    if valid:
        assert GREETED == await retry(server, state)
    else:
        error = await refused(server, state)
        assert (-32602, EXPIRED) == (error.code, error.message)


async def test_a_state_from_another_principal_is_refused() -> None:
    server = make_server()
    state = await first_state(server, principal=User("alice"))

    assert await retry(server, state, principal=User("alice")) == GREETED
    assert (await refused(server, state, principal=User("mallory"))).code == -32602
    assert (await refused(server, state)).code == -32602


async def test_a_state_for_another_tool_is_refused() -> None:
    server = make_server()
    state = await first_state(server, "greet")

    assert (await refused(server, state, name="order")).code == -32602


async def test_a_state_for_other_arguments_is_refused() -> None:
    server = make_server()
    state = await first_state(server, "greet")

    assert (await refused(server, state, arguments={"x": 1})).code == -32602


async def test_a_tool_state_is_refused_by_a_prompt() -> None:
    server = make_server()
    state = await first_state(server, "greet")
    async with McpTestClient(server, client_capabilities=ALL_CAPS) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.request(
                "prompts/get",
                {
                    "name": "greet",
                    "inputResponses": {"user_name": ALICE},
                    "requestState": state,
                },
            )

    assert caught.value.code == -32602


async def test_a_state_signed_with_another_key_is_refused() -> None:
    state = await first_state(make_server())
    stranger = Server("s", "1", tools=[greet], state_key=OTHER_KEY)

    error = await refused(stranger, state)

    assert (-32602, DOES_NOT_VERIFY) == (error.code, error.message)


async def test_a_rotated_key_list_still_verifies_the_older_key() -> None:
    """Server(state_key=[new, old]): state signed before the rotation still works."""
    state = await first_state(Server("s", "1", tools=[greet], state_key=KEY))
    rotated = Server("s", "1", tools=[greet], state_key=[OTHER_KEY, KEY])

    assert GREETED == await retry(rotated, state)


async def test_the_first_key_of_a_list_signs() -> None:
    rotated = Server("s", "1", tools=[greet], state_key=[OTHER_KEY, KEY])
    state = await first_state(rotated)
    only_new = Server("s", "1", tools=[greet], state_key=OTHER_KEY)
    only_old = Server("s", "1", tools=[greet], state_key=KEY)

    assert GREETED == await retry(only_new, state)
    assert -32602 == (await refused(only_old, state)).code


async def test_a_key_dropped_from_the_list_no_longer_verifies() -> None:
    state = await first_state(Server("s", "1", tools=[greet], state_key=KEY))
    retired = Server("s", "1", tools=[greet], state_key=[OTHER_KEY])

    assert -32602 == (await refused(retired, state)).code


async def test_the_handler_never_runs_on_a_refused_state() -> None:
    runs: list[object] = []

    @tool
    def counted() -> str | NeedsInput:
        """Count the runs."""
        runs.append(ToolContext.current().state)
        return NeedsInput({}, state="seen")

    outcomes: list[str] = []
    server = Server(
        "s",
        "1",
        tools=[counted],
        state_key=KEY,
        receipts=lambda r: outcomes.append(r.outcome),
    )
    state = await first_state(server, "counted")
    await refused(server, state + "x", name="counted")

    assert runs == [None]
    assert outcomes == ["ok", "invalid"]


async def test_the_state_is_sealed_with_a_fresh_nonce(clock: list[float]) -> None:
    """AES-256-GCM (api.md "Trust"): a 12-byte nonce, then a ciphertext the client
    cannot read; two seals of the same state differ."""
    server = make_server()
    one, two = await first_state(server), await first_state(server)
    _, nonce, sealed = one.split(".")

    assert 12 == len(_unb64(nonce))
    assert b"tools/call" not in _unb64(sealed)
    assert b"exp" not in _unb64(sealed)
    assert one != two


def test_the_sealed_state_opens_with_its_expiry_and_contents() -> None:
    sealer = StateSealer((KEY.encode(),), clock=lambda: 1_000_000.0)
    token = sealer.seal({"s": {"step": 2}}, Binding("tools/call", "d", None))

    assert {"s": {"step": 2}} == sealer.open(token, Binding("tools/call", "d", None))
    assert b"step" not in _unb64(token.split(".")[2])


def test_sealing_what_is_not_json_is_a_type_error() -> None:
    sealer = StateSealer((KEY.encode(),))

    with pytest.raises(TypeError, match=r"^the carried state must be a JSON value$"):
        sealer.seal({"s": object()}, Binding("tools/call", "d", None))  # type: ignore[dict-item]


def test_the_payload_does_not_reveal_the_principal() -> None:
    sealer = StateSealer((KEY.encode(),))
    token = sealer.seal({"s": 1}, Binding("tools/call", "d", "alice@example.com"))

    assert all(b"alice" not in _unb64(part) for part in token.split(".")[1:])


def test_opening_checks_the_method_and_digest() -> None:
    sealer = StateSealer((KEY.encode(),))
    token = sealer.seal({"s": 1}, Binding("tools/call", "d", None))

    assert sealer.open(token, Binding("tools/call", "d", None)) == {"s": 1}
    with pytest.raises(InvalidState):
        sealer.open(token, Binding("prompts/get", "d", None))
    with pytest.raises(InvalidState):
        sealer.open(token, Binding("tools/call", "e", None))
    with pytest.raises(InvalidState):
        sealer.open(12, Binding("tools/call", "d", None))


def test_the_digest_ignores_key_order_and_treats_no_arguments_as_empty() -> None:
    a = salient_digest("tools/call", {"name": "t", "arguments": {"a": 1, "b": 2}})
    b = salient_digest("tools/call", {"name": "t", "arguments": {"b": 2, "a": 1}})

    assert a == b
    assert salient_digest("tools/call", {"name": "t"}) == salient_digest(
        "tools/call", {"name": "t", "arguments": {}}
    )
    assert salient_digest("resources/read", {"uri": "a://1"}) != salient_digest(
        "resources/read", {"uri": "a://2"}
    )


@pytest.mark.parametrize("key", ["short", b"x" * 31, [], ["k" * 32, "short"]])
def test_a_short_or_missing_key_is_rejected(key: Any) -> None:
    with pytest.raises(ValueError, match="key"):
        Server("s", "1", state_key=key)


def test_keys_come_from_the_environment_when_not_configured() -> None:
    keys = parse_keys(None, environ={ENV_STATE_KEY: f"{'a' * 32}, {'b' * 32}"})

    assert keys == (b"a" * 32, b"b" * 32)


def test_without_any_key_a_random_one_is_made() -> None:
    one, two = parse_keys(None, environ={}), parse_keys(None, environ={})

    assert len(one[0]) == 32
    assert one != two


def test_a_str_key_and_its_bytes_are_the_same_key() -> None:
    assert parse_keys("k" * 32) == parse_keys(b"k" * 32)


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ([], ValueError, "state_key is an empty list; give at least one key"),
        (
            "short",
            ValueError,
            "a state key must be at least 32 bytes; make one with "
            "secrets.token_urlsafe(32)",
        ),
        ([b"k" * 32, 7], TypeError, "a state key is bytes or str"),
    ],
)
def test_a_bad_state_key_says_what_to_give_instead(
    config: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        parse_keys(config)

    assert message == str(caught.value)


def test_a_sealer_from_config_keeps_its_ttl() -> None:
    sealer = StateSealer.from_config("k" * 32, ttl=12.5)

    assert (b"k" * 32,) == sealer.keys
    assert 12.5 == sealer.ttl


def _digest_of(canonical: str) -> str:
    return _b64(hashlib.sha256(canonical.encode()).digest())


@pytest.mark.parametrize(
    ("method", "params", "canonical"),
    [
        (
            "tools/call",
            {"name": "tëst", "arguments": {"b": [1, 2.5], "a": "é"}},
            '{"arguments":{"a":"é","b":[1,2.5]},"name":"tëst"}',
        ),
        ("prompts/get", {"name": "p"}, '{"arguments":{},"name":"p"}'),
        ("resources/read", {"uri": "a://ü", "name": "x"}, '{"uri":"a://ü"}'),
    ],
)
def test_the_digest_is_sha256_of_the_canonical_json(
    method: str, params: dict[str, Any], canonical: str
) -> None:
    """The binding's format is fixed: sorted keys, no spaces, UTF-8 as is, so replicas
    running this version agree on it."""
    assert _digest_of(canonical) == salient_digest(method, params)


def test_the_digest_refuses_nan() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        salient_digest("tools/call", {"name": "t", "arguments": {"x": float("nan")}})


@pytest.mark.parametrize(
    ("raw", "text"),
    [(b"", ""), (b"\xff", "_w"), (b"\x00\x00\x17", "AAAX"), (b"\xfb\xff", "-_8")],
)
def test_tokens_use_unpadded_base64url(raw: bytes, text: str) -> None:
    assert text == _b64(raw)
    if raw:
        assert raw == _unb64_strict(text)


def test_every_length_round_trips_through_base64url() -> None:
    for size in range(1, 50):
        raw = bytes(range(size))
        assert raw == _unb64_strict(_b64(raw)), size


# -- several processes need one shared key ----------------------------------------------
@pytest.mark.parametrize(
    ("config", "processes", "environ"),
    [
        (None, 1, {}),
        (KEY, 2, {}),
        ([KEY, OTHER_KEY], 4, {}),
        (None, 2, {ENV_STATE_KEY: "k" * 43}),
        (None, 2, {ENV_STATE_KEY: ",k,"}),
    ],
)
def test_a_configured_key_or_one_process_needs_nothing_more(
    config: Any, processes: int, environ: dict[str, str]
) -> None:
    require_shared_key(config, processes=processes, environ=environ)


@pytest.mark.parametrize("blank", [None, "", " ", " , ,", "OTHER"])
def test_several_processes_without_a_shared_key_are_refused(blank: str | None) -> None:
    environ = {} if blank is None else {ENV_STATE_KEY: blank}
    if blank == "OTHER":
        environ = {"TRIO_MCP_STATE_KEYS": "k" * 43}

    with pytest.raises(StateKeyRequired) as refused:
        require_shared_key(None, processes=2, environ=environ)

    assert (
        "2 worker processes need one shared requestState key, or a multi round-trip "
        "request fails when its rounds land on different workers: set "
        'TRIO_MCP_STATE_KEY (make one with: python -c "import secrets; '
        'print(secrets.token_urlsafe(32))") or pass Server(state_key=...), the same '
        "value on every worker and replica"
    ) == str(refused.value)


def test_the_process_environment_is_read_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_STATE_KEY, "k" * 43)
    require_shared_key(None, processes=3)
    monkeypatch.delenv(ENV_STATE_KEY)

    with pytest.raises(StateKeyRequired, match=r"^3 worker processes"):
        require_shared_key(None, processes=3)


async def test_a_state_without_input_responses_is_still_checked() -> None:
    """A ``requestState`` sent alone is opened like any other: tampering is refused,
    and an intact one runs the handler, which asks again."""
    server = make_server()
    state = await first_state(server)
    version, nonce, sealed = state.split(".")
    tampered = f"{version}.{nonce}.{_b64(_flip(_unb64(sealed), 5))}"
    async with McpTestClient(server, client_capabilities=ALL_CAPS) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("greet", request_state=tampered)
        again = await client.call_tool("greet", request_state=state)

    assert (-32602, DOES_NOT_VERIFY, None) == (
        caught.value.code,
        caught.value.message,
        caught.value.data,
    )
    assert "input_required" == wire(again.raw)["resultType"]


@pytest.mark.parametrize(
    ("response", "path", "problem"),
    [
        (
            {"action": "accept", "content": {"name": 5}},
            "inputResponses.user_name.content.name",
            "expected a string",
        ),
        (7, "inputResponses.user_name", "an input response must be an object"),
    ],
)
async def test_a_bad_input_response_is_refused_with_every_problem_as_data(
    response: object, path: str, problem: str
) -> None:
    server = make_server()
    state = await first_state(server)
    async with McpTestClient(server, client_capabilities=ALL_CAPS) as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool(
                "greet", input_responses={"user_name": response}, request_state=state
            )

    assert (
        -32602,
        f"invalid inputResponses:\n- {path}: {problem}",
        {"problems": [{"path": path, "message": problem}]},
    ) == (caught.value.code, caught.value.message, caught.value.data)
