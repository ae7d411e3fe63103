"""A ``receipts=`` callable that keeps what it is given, for tests that read receipts."""

from __future__ import annotations

import attrs

from trio_mcp import Receipt


@attrs.define
class Sink:
    """A ``receipts=`` callable that keeps every receipt, in order."""

    receipts: list[Receipt] = attrs.field(factory=list)

    def __call__(self, receipt: Receipt) -> None:
        self.receipts.append(receipt)

    @property
    def only(self) -> Receipt:
        """The one receipt received; fails the test if there is not exactly one."""
        assert 1 == len(self.receipts), self.receipts
        return self.receipts[0]
