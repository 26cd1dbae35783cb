"""The path of one ``loopbench run``, walked as a newcomer reads it: the project's files in
the order they are first entered, and every climb back into a file already entered and
left.

``loopbench run --tasks depot --arm react_text`` against the fake endpoint (in this
process), traced with ``sys.setprofile`` on the thread that runs it. Imports are done
before tracing and are not on the path. A call's caller is the frame that made it (a
library calling back into the project is no project caller). A back-edge is a call from
one file into another that was entered before and is not on the call stack now (the
reader climbs back up); each distinct (caller, callee) pair is judged once, when first
taken. The main line is the files that call on into other project files; its back-edges
are those between two main-line files. Test
endpoints (``loopbench/harness/fakes``) stand in for the model server and are left out.

    .venv/bin/python bench/run_walk.py [--all] [--edges] [-- RUN-ARGS...]

docs/architecture.md's path is the main-line list this prints, in this order.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from run_path import PACKAGES, ROOT, import_all


@dataclass
class Walk:
    order: list[str] = field(default_factory=list)
    edges: set[tuple[str, str]] = field(default_factory=set)
    back: dict[tuple[str, str], str] = field(default_factory=dict)
    """Each back-edge, with the call that first took it (caller function -> callee)."""

    def main_line(self) -> list[str]:
        callers = {caller for caller, callee in self.edges}
        return [name for name in self.order if name in callers]

    def main_back(self) -> dict[tuple[str, str], str]:
        line = set(self.main_line())
        return {(a, b): call for (a, b), call in self.back.items() if a in line and b in line}


def walk(run_args: list[str]) -> Walk:
    from loopbench.harness.cli.main import main
    from loopbench.harness.fakes.fake_server import FakeServer

    roots = tuple(str(ROOT / p) + "/" for p in PACKAGES)
    fakes = str(ROOT / "loopbench" / "harness" / "fakes") + "/"
    found = Walk()
    entered: set[str] = set()

    def project_file(frame: FrameType | None) -> str | None:
        if frame is None or frame.f_code.co_qualname == "<module>":
            return None
        name = frame.f_code.co_filename
        if name.startswith(roots) and not name.startswith(fakes):
            return str(Path(name).relative_to(ROOT))
        return None

    def on_stack(frame: FrameType | None) -> set[str]:
        files = set()
        while frame is not None:
            if (name := project_file(frame)) is not None:
                files.add(name)
            frame = frame.f_back
        return files

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or (callee := project_file(frame)) is None:
            return
        caller = project_file(frame.f_back)  # the frame that made the call
        if caller is not None and caller != callee and (caller, callee) not in found.edges:
            found.edges.add((caller, callee))  # each edge judged once, when first taken
            if callee in entered and callee not in on_stack(frame.f_back):
                assert frame.f_back is not None
                call = f"{frame.f_back.f_code.co_qualname} -> {frame.f_code.co_qualname}"
                found.back.setdefault((caller, callee), call)
        if callee not in entered:
            entered.add(callee)
            found.order.append(callee)

    import_all()
    with FakeServer() as server, tempfile.TemporaryDirectory() as tmp:
        args = ["run", "--model", "fake", "--base-url", server.base_url]
        args += ["--out", str(Path(tmp) / "results"), *run_args]
        sys.setprofile(hook)
        try:
            main(args, standalone_mode=False)
        finally:
            sys.setprofile(None)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="Also list every file entered.")
    parser.add_argument("--edges", action="store_true", help="List the back-edges.")
    parser.add_argument("run_args", nargs="*", help="Replaces --tasks depot --arm react_text.")
    options = parser.parse_args()
    found = walk(options.run_args or ["--tasks", "depot", "--arm", "react_text"])
    line, back = found.main_line(), found.main_back()
    print("main line, in the order first entered:")
    for number, name in enumerate(line, 1):
        print(f"{number:3}. {name}")
    if options.edges:
        print("main-line back-edges:")
        print("".join(f"  {a} -> {b}  ({call})\n" for (a, b), call in back.items()), end="")
    if options.all:
        print("every file, in the order first entered:")
        print("".join(f"  {name}\n" for name in found.order), end="")
        if options.edges:
            print("back-edges:")
            edges = found.back.items()
            print("".join(f"  {a} -> {b}  ({call})\n" for (a, b), call in edges), end="")
    print(f"main line: {len(line)} files, {len(back)} back-edges")
    print(f"all files: {len(found.order)} files, {len(found.back)} back-edges")


if __name__ == "__main__":
    main()
