"""Python types -> JSON Schema 2020-12: the type table, Field constraints, validators.

Other subpackages import from here, never from the private modules.
"""

from ._constraints import METADATA_KEY as METADATA_KEY
from ._constraints import Check as Check
from ._constraints import Field as Field
from ._constraints import compile_checks as compile_checks
from ._constraints import describe_validator as describe_validator
from ._constraints import described as described
from ._inspect import FieldInfo as FieldInfo
from ._inspect import RecordField as RecordField
from ._inspect import declared_description as declared_description
from ._inspect import field_info as field_info
from ._inspect import init_fields as init_fields
from ._inspect import is_model as is_model
from ._inspect import is_record as is_record
from ._inspect import is_secret as is_secret
from ._inspect import is_tagged_union as is_tagged_union
from ._inspect import kind_of as kind_of
from ._inspect import name_of as name_of
from ._inspect import record_fields as record_fields
from ._inspect import strip as strip
from ._inspect import union_parts as union_parts
from ._types import Argument as Argument
from ._types import UnsupportedType as UnsupportedType
from ._types import arguments_schema as arguments_schema
from ._types import check_supported as check_supported
from ._types import json_schema as json_schema
from ._types import literal_values as literal_values
from ._verbatim import asserts as asserts
from ._verbatim import is_open as is_open

__all__ = [
    "METADATA_KEY",
    "Argument",
    "Check",
    "Field",
    "FieldInfo",
    "RecordField",
    "UnsupportedType",
    "arguments_schema",
    "asserts",
    "check_supported",
    "compile_checks",
    "declared_description",
    "describe_validator",
    "described",
    "field_info",
    "init_fields",
    "is_model",
    "is_open",
    "is_record",
    "is_secret",
    "is_tagged_union",
    "json_schema",
    "kind_of",
    "literal_values",
    "name_of",
    "record_fields",
    "strip",
    "union_parts",
]
