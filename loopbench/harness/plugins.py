"""Patterns, task sets, tools and graders from outside the package.

A plugin is a module that registers what it adds when imported: a pattern with
``@loopbench.register_pattern(name, OptionsModel, summary)`` on its factory, a task set
with ``loopbench.register_taskset(name, loader)``, a tool with
``@loopbench.register_tool(name, OptionsModel, summary)`` and a grader with
``@loopbench.register_grader(name, TaskModel, summary)``. loopbench imports it

- when named with ``--plugin module.path`` (``run``, ``patterns``), or
- when an installed package declares it as an entry point, in the group
  ``loopbench.patterns``, ``loopbench.tasksets``, ``loopbench.tools`` or
  ``loopbench.graders`` (``[project.entry-points]`` in its pyproject.toml): every such
  entry point is loaded the first time a name of its kind is looked up
  (loopbench/harness/registry.py, ``load_entry_points``).

A plugin that cannot be imported is refused with its name and the error, never a
traceback.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from loopbench.harness.errors import BadInput
from loopbench.harness.files import special_file_problem


class PluginError(BadInput):
    """A plugin module that cannot be imported, or is not one."""


def load_plugin(module: str) -> None:
    """Import ``module`` (``--plugin``), so that what it registers is there to run."""
    try:
        importlib.import_module(module)
    # guard: plugin-cannot-imported-one-line
    except Exception as exc:  # the plugin's own failure, said in one line
        reason = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ModuleNotFoundError) and (special := _special_source(module)):
            reason = special  # Python passes over such a file: say why it was not found
        raise PluginError(
            f"--plugin {module}: cannot be imported ({reason}); give a module path Python "
            "can import, e.g. mypackage.patterns"
        ) from None


def _special_source(module: str) -> str | None:
    """``FILE is a FIFO ...`` when a file ``module`` or a package holding it would be read
    from is not a regular file."""
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        relative = Path(*parts[:depth])
        for folder in sys.path:
            for candidate in (relative.with_suffix(".py"), relative / "__init__.py"):
                path = Path(folder or ".") / candidate
                if problem := special_file_problem(path):
                    return f"{path} {problem}"
    return None
