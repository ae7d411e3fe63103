"""What the author wrote, checked once when the decorator runs, and how it runs."""

from ._base import Declaration as Declaration
from ._content import CONTENT_TYPES as CONTENT_TYPES
from ._content import AudioContent as AudioContent
from ._content import BlobResourceContents as BlobResourceContents
from ._content import Content as Content
from ._content import EmbeddedResource as EmbeddedResource
from ._content import ImageContent as ImageContent
from ._content import PromptMessage as PromptMessage
from ._content import ResourceLink as ResourceLink
from ._content import TextContent as TextContent
from ._content import TextResourceContents as TextResourceContents
from ._needs_input import NeedsInput as NeedsInput
from ._prompt import Prompt as Prompt
from ._prompt import PromptSpec as PromptSpec
from ._prompt import prompt as prompt
from ._resource import Resource as Resource
from ._resource import ResourceSpec as ResourceSpec
from ._resource import resource as resource
from ._tool import Tool as Tool
from ._tool import ToolHints as ToolHints
from ._tool import ToolSpec as ToolSpec
from ._tool import tool as tool
