"""Every module imports on its own, in a fresh interpreter: no import cycle hides behind
the order in which the test suite happens to import things."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
MODULES = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts)
    for package in ("loopbench",)
    for path in (ROOT / package).rglob("*.py")
    # Coding tasks' suites and solutions are data the sandbox runs, not modules.
    if path.name != "__main__.py" and "suites" not in path.parts
)


@pytest.mark.parametrize("module", MODULES)
def test_the_module_imports_on_its_own(module):
    name = module.removesuffix(".__init__")
    result = subprocess.run(
        [sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
