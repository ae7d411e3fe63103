"""One message in, reply frames out; knows no transport."""

from ._broadcast import Broadcast as Broadcast
from ._broadcast import BroadcastStatistics as BroadcastStatistics
from ._broadcast import Change as Change
from ._catalog import Catalog as Catalog
from ._dispatcher import Dispatcher as Dispatcher
from ._listen import LISTEN_METHOD as LISTEN_METHOD
from ._request import Caller as Caller
from ._request import Reply as Reply
