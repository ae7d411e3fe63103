"""Changes listeners may need: the broadcast, its Redis fan-out, listen streams.

Below the dispatcher: nothing here knows a catalog, a call or a transport.
"""

from ._broadcast import Broadcast as Broadcast
from ._broadcast import BroadcastStatistics as BroadcastStatistics
from ._broadcast import Change as Change
from ._broadcast import ListKind as ListKind
from ._listen import LISTEN_METHOD as LISTEN_METHOD
