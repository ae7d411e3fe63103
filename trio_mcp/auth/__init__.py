"""An OAuth 2.1 resource server for Streamable HTTP (extra ``auth``).

MCP revision 2026-07-28 makes an HTTP server an OAuth 2.1 resource server that must
check every bearer token, audience included. ``BearerAuth`` does it: given to
``serve_http(auth=...)`` or ``mount(auth=...)``, it verifies JWT access tokens
against the issuer's published keys (or asks the issuer about opaque ones, RFC
7662), maps the token's scopes to capabilities, serves the RFC 9728 metadata and
answers 401/403 the way RFC 6750 and the MCP authorization rules say; tokens bound
to a key need a DPoP proof (RFC 9449). ``TokenExchange`` (RFC 8693) gives a gateway
a token aimed at each upstream for its caller.

``import trio_mcp`` never imports this package (it needs ``httpx`` and ``joserfc``):
the ``auth`` extra (``pip install ".[auth]"`` in a clone, or the wheel built there).
"""

from ._bearer import BearerAuth
from ._exchange import ExchangeFailed, TokenExchange
from ._principal import HeldToken, TokenPrincipal
from ._settings import Introspection

__all__ = [
    "BearerAuth",
    "ExchangeFailed",
    "HeldToken",
    "Introspection",
    "TokenExchange",
    "TokenPrincipal",
]

for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
