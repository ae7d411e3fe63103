"""Other servers served beside a server's own catalog (``Server(upstreams=...)``).

``Upstream`` is the value a user writes; ``Gateway`` keeps what each upstream
serves current (``_gateway``); a composed ``Server`` is read in process
(``_inprocess``), a remote one through ``trio_mcp.client`` (``_supervise``), which
is imported only when a remote upstream is served.
"""

from ._gateway import Gateway as Gateway
from ._value import Upstream as Upstream
from ._value import checked_upstreams as checked_upstreams
