"""JSON values <-> Python values through one cattrs converter.

Other subpackages import from here, never from the private modules.
"""

from ._converter import converter as converter
from ._converter import decode as decode
from ._converter import encode as encode
from ._problems import Invalid as Invalid
from ._problems import problems_of as problems_of

__all__ = ["Invalid", "converter", "decode", "encode", "problems_of"]
