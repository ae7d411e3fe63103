"""The skills extension (SEP-2640, ``io.modelcontextprotocol/skills``).

Skill folders, read and checked when the server is built, served as ``skill://``
resources with ``skills/list``, ``skills/get`` and ``resources/directory/read``.
Beside the dispatcher, which routes the extension's methods here.
"""

from ._serve import SKILLS_EXTENSION as SKILLS_EXTENSION
from ._serve import SkillSet as SkillSet
from ._skill import Skill as Skill
