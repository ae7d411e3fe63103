"""Who may do what, and the evidence of what was done. Plain values; no trio."""

from ._caps import Capability as Capability
from ._caps import Grants as Grants
from ._caps import closure as closure
from ._caps import resolve_grants as resolve_grants
from ._receipts import Outcome as Outcome
from ._receipts import Receipt as Receipt
from ._receipts import ReceiptSink as ReceiptSink
from ._receipts import receipt_logger as receipt_logger
from ._secrets import Secret as Secret
