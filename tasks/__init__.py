"""Task sets as data, and the tools they offer."""

from tasks.answer_keys import Expected
from tasks.taskset import Task, TaskSet, TaskSetError, builtin_names, load_taskset

__all__ = ["Expected", "Task", "TaskSet", "TaskSetError", "builtin_names", "load_taskset"]
