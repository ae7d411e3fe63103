"""Who may do what, and the evidence of what was done. Plain values; no trio."""

from ._caps import Capability as Capability
from ._caps import Grants as Grants
from ._caps import closure as closure
from ._caps import resolve_grants as resolve_grants
from ._receipts import Outcome as Outcome
from ._receipts import Receipt as Receipt
from ._receipts import ReceiptSink as ReceiptSink
from ._receipts import receipt_logger as receipt_logger
from ._redact import MASK as MASK
from ._redact import SecretFilter as SecretFilter
from ._redact import call_values as call_values
from ._redact import close_registry as close_registry
from ._redact import mask_json_values as mask_json_values
from ._redact import mask_text as mask_text
from ._redact import mask_write_only as mask_write_only
from ._redact import open_registry as open_registry
from ._redact import redact as redact
from ._redact import redact_json as redact_json
from ._redact import register_in as register_in
from ._redact import reveal_all as reveal_all
from ._redact import wrap_write_only as wrap_write_only
from ._secrets import Secret as Secret
