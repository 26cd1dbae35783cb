"""What a newcomer reads following ``loopbench run`` to the printed table: the project's
files and functions that run, counted by a profiler hook.

One ``loopbench run`` of every built-in pattern on the depot questions against the fake
endpoint (in this process), then its table, as the README shows them. A file counts
when one of its functions runs; test endpoints (``loopbench/harness/fakes``) are left out: they
stand in for the model server. Prints the files by package and the totals.

    .venv/bin/python bench/run_path.py [--list]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGES = ("harness", "graders", "sandbox", "tasks", "loopbench")


def import_all() -> None:
    """Import every module of the project (those whose optional dependencies are here)."""
    for package in PACKAGES:
        for module in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if module.name.endswith("__main__"):  # runs the command
                continue
            with contextlib.suppress(Exception):  # an optional dependency missing (ray)
                importlib.import_module(module.name)


def trace_run(folder: Path) -> set[tuple[str, str]]:
    """The (file, function) pairs of the project that ran."""
    from loopbench.harness.cli.main import main
    from loopbench.harness.fakes.fake_server import FakeServer
    from loopbench.harness.patterns.catalog import registered

    seen: set[tuple[str, str]] = set()
    roots = tuple(str(ROOT / p) + "/" for p in PACKAGES)
    fakes = str(ROOT / "loopbench" / "harness" / "fakes")

    def hook(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code.co_qualname != "<module>":  # not imports
            name = frame.f_code.co_filename
            if name.startswith(roots) and not name.startswith(fakes):
                seen.add((str(Path(name).relative_to(ROOT)), frame.f_code.co_qualname))

    import_all()  # what runs at import is not on the path: only the calls a run makes
    arms = [arg for name in sorted(registered()) for arg in ("--arm", name)]
    with FakeServer() as server:
        args = ["run", "--model", "fake", "--base-url", server.base_url, "--out", str(folder)]
        sys.setprofile(hook)
        try:
            main([*args, *arms], standalone_mode=False)
        finally:
            sys.setprofile(None)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="Print every file that ran.")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        seen = trace_run(Path(tmp) / "results")
    files = sorted({path for path, _ in seen})
    by_area = Counter(str(Path(path).parent) for path in files)
    for area, count in sorted(by_area.items()):
        print(f"{area:28} {count:3} files")
    if options.list:
        print("\n".join(files))
    print(f"files: {len(files)}  functions: {len(seen)}")


if __name__ == "__main__":
    main()
