"""One message in, reply frames out; knows no transport."""

from ._catalog import Catalog as Catalog
from ._dispatcher import Caller as Caller
from ._dispatcher import Dispatcher as Dispatcher
from ._dispatcher import Reply as Reply
