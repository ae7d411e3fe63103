"""The tasks extension (SEP-2663): tool calls that run on after their request."""

from ._record import TaskRecord as TaskRecord
from ._runner import TaskRunner as TaskRunner
from ._runner import declares_tasks as declares_tasks
from ._runner import task_runner as task_runner
