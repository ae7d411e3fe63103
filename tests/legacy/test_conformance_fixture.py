"""The conformance fixture with ``--legacy``: the 2025-11-25 scenarios' behaviour.

The official suite drives servers over Streamable HTTP only, so until legacy HTTP
sessions exist its 2025-11-25 set cannot reach the legacy edge. These tests make the
same requests as its scenarios (``server-initialize``, ``tools-call-with-logging``,
``tools-call-sampling``, ``tools-call-elicitation``, ``elicitation-sep1034-defaults``,
``resources-subscribe``/``unsubscribe``, ``ping``, ``logging-set-level``,
``completion-complete``) over the edge in-process, with every message validated
against the 2025-11-25 schema.
"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from support.legacy import LegacyPeer

FIXTURE = Path(__file__).resolve().parents[2] / "examples" / "conformance_server.py"
#: The capabilities the suite's 2025-11-25 client declares.
SUITE_CAPS: dict[str, Any] = {"sampling": {}, "elicitation": {}}


def _fixture() -> ModuleType:
    name = f"conformance_fixture_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, FIXTURE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    module.server.legacy = True
    return module


async def _answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "sampling/createMessage":
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "This is a test response"},
            "model": "test-model",
            "stopReason": "endTurn",
        }
    fields = params["requestedSchema"]["properties"]
    if "username" in fields:
        return {
            "action": "accept",
            "content": {"username": "testuser", "email": "test@example.com"},
        }
    if "titledMulti" in fields:
        return {"action": "accept", "content": ENUM_ANSWER}
    return {"action": "accept", "content": {}}


#: The suite's answer to the SEP-1330 form (elicitation-sep1330-enums).
ENUM_ANSWER = {
    "untitledSingle": "option1",
    "titledSingle": "value1",
    "legacyEnum": "opt1",
    "untitledMulti": ["option1", "option2"],
    "titledMulti": ["value1", "value2"],
}


async def test_the_handshake_era_scenarios_against_the_fixture() -> None:
    fixture = _fixture()
    async with LegacyPeer(
        fixture.server, capabilities=SUITE_CAPS, answer=_answer
    ) as peer:
        init = await peer.initialize()
        pong = await peer.request("ping")
        level = await peer.request("logging/setLevel", {"level": "debug"})
        logged = await peer.request(
            "tools/call", {"name": "test_tool_with_logging", "arguments": {}}
        )
        logs = [n for n in peer.notifications if n["method"] == "notifications/message"]
        sampled = await peer.request(
            "tools/call",
            {
                "name": "test_sampling",
                "arguments": {"prompt": "Test prompt for sampling"},
            },
        )
        elicited = await peer.request(
            "tools/call",
            {"name": "test_elicitation", "arguments": {"message": "Please answer"}},
        )
        defaults = await peer.request(
            "tools/call", {"name": "test_elicitation_sep1034_defaults", "arguments": {}}
        )
        enums = await peer.request(
            "tools/call", {"name": "test_elicitation_sep1330_enums", "arguments": {}}
        )
        subscribed = await peer.request(
            "resources/subscribe", {"uri": "test://watched-resource"}
        )
        unsubscribed = await peer.request(
            "resources/unsubscribe", {"uri": "test://watched-resource"}
        )
        completed = await peer.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                "argument": {"name": "arg1", "value": "test"},
            },
        )

    caps = init["capabilities"]
    assert {"subscribe": True, "listChanged": True} == caps["resources"]
    assert {"listChanged": True} == caps["tools"] == caps["prompts"]
    assert {} == caps["logging"] == caps["completions"]
    # Skills are offered as an extension (SEP-1724's place for them); tasks are not.
    assert ["io.modelcontextprotocol/skills"] == list(caps["extensions"])
    assert {} == pong == level == subscribed == unsubscribed
    assert "Tool with logging executed successfully" == logged["content"][0]["text"]
    assert 3 <= len(logs)
    sample, elicit, form, choices = peer.asked
    assert {
        "messages": [
            {
                "role": "user",
                "content": {"type": "text", "text": "Test prompt for sampling"},
            }
        ],
        "maxTokens": 100,
    } == sample["params"]
    assert "LLM response: This is a test response" == sampled["content"][0]["text"]
    assert {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    } == elicit["params"]["requestedSchema"]["properties"]
    assert elicited["content"][0]["text"].startswith("User response: action=accept")
    properties = form["params"]["requestedSchema"]["properties"]
    assert {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    } == {name: p["default"] for name, p in properties.items()}
    assert ["active", "inactive", "pending"] == properties["status"]["enum"]
    assert "integer" == properties["age"]["type"]
    assert "number" == properties["score"]["type"]
    assert defaults["content"][0]["text"].startswith(
        "Elicitation completed: action=accept"
    )
    assert isinstance(completed["completion"]["values"], list)
    shapes = choices["params"]["requestedSchema"]["properties"]
    assert ["option1", "option2", "option3"] == shapes["untitledSingle"]["enum"]
    assert {"const": "value1", "title": "First Option"} == shapes["titledSingle"][
        "oneOf"
    ][0]
    assert "enum" not in shapes["titledSingle"]
    assert ["Option One", "Option Two", "Option Three"] == shapes["legacyEnum"][
        "enumNames"
    ]
    assert {"type": "string", "enum": ["option1", "option2", "option3"]} == shapes[
        "untitledMulti"
    ]["items"]
    assert {"anyOf"} == set(shapes["titledMulti"]["items"])
    assert enums["content"][0]["text"].startswith(
        'Elicitation completed: action=accept, content={"untitledSingle": "option1"'
    )
