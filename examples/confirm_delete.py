"""An MRTR confirmation: a tool that asks the user before it deletes anything.

The first call returns ``NeedsInput`` with an elicitation; the client shows it and
calls again with the user's answer. Nothing is deleted until the user confirms.
The carried ``state`` is sealed by the server, so a client cannot forge it.

    trio-mcp run examples/confirm_delete.py
"""

from __future__ import annotations

import attrs

from trio_mcp import Elicit, ElicitResult, NeedsInput, Server, ToolContext, tool


@attrs.frozen
class Confirmation:
    """What the user is asked."""

    confirm: bool


@attrs.define
class Drafts:
    """Drafts held in memory."""

    names: set[str] = attrs.field(factory=lambda: {"welcome", "old-offer"})

    @tool
    def delete_draft(self, name: str) -> str | NeedsInput:
        """
        Delete a draft after the user confirms it.

        Args:
            name: The draft to delete.
        """
        if name not in self.names:
            return f"there is no draft {name!r}"
        answer = ToolContext.current().input_responses.get("confirm")
        if not isinstance(answer, ElicitResult):
            question = Elicit(f"Delete the draft {name!r}?", schema=Confirmation)
            return NeedsInput({"confirm": question}, state={"name": name})
        if not isinstance(answer.content, Confirmation) or not answer.content.confirm:
            return f"kept {name!r}"
        self.names.discard(name)
        return f"deleted {name!r}"


drafts = Drafts()
server = Server("drafts", "1.0", tools=[drafts.delete_draft])
