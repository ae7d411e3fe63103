"""JSON values <-> Python values through one cattrs converter.

Other subpackages import from here, never from the private modules. cattrs loads on
the first decode or encode (see ``_converter``), so nothing here imports it.
"""

from ._converter import decode as decode
from ._converter import encode as encode
from ._converter import get_converter as get_converter

__all__ = ["decode", "encode", "get_converter"]
