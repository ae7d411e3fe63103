"""Model Context Protocol servers on Trio.

Write ordinary typed functions, decorate them with ``@tool``, ``@resource`` or
``@prompt``, list them in a ``Server``, and serve it over stdio or Streamable HTTP.
The public names are re-exported here; everything else is private.
"""

from ._errors import DecodeError as DecodeError
from ._errors import DuplicateName as DuplicateName
from ._errors import InsecureBinding as InsecureBinding
from ._errors import InvalidDeclaration as InvalidDeclaration
from ._errors import McpError as McpError
from ._errors import Problem as Problem
from ._errors import ToolError as ToolError
from ._errors import Transport as Transport
from ._version import __version__ as __version__

__all__ = [
    "DecodeError",
    "DuplicateName",
    "InsecureBinding",
    "InvalidDeclaration",
    "McpError",
    "Problem",
    "ToolError",
    "Transport",
    "__version__",
]
