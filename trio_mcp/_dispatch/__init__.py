"""One message in, reply frames out; knows no transport."""

from ._call import Call as Call
from ._call import Ending as Ending
from ._call import Middleware as Middleware
from ._call import Next as Next
from ._catalog import Catalog as Catalog
from ._dispatcher import Dispatcher as Dispatcher
from ._request import Caller as Caller
from ._request import Reply as Reply
