"""``loopbench tasks``: list the task sets, generate a depot-style one, or check one with
the reference solver.

    loopbench tasks list --tasks data.csv --format json
    loopbench tasks generate --n 500 --hops 2-4 --seed 7 --out tasks/mine
    loopbench tasks check tasks/mine

``check`` exits 0 when the solver agrees with every question, 1 when it disagrees with
any (each named on its own line), and 2 when the folder is not a usable generated set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from tabulate import tabulate

from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Group
from loopbench.harness.errors import BadInput
from loopbench.harness.files import output_errors
from loopbench.harness.terminal import error_line, one_line
from loopbench.tasks.generate.build import Options, generate, parse_hops, parse_operations
from loopbench.tasks.generate.check import disagreements
from loopbench.tasks.generate.writer import write_set
from loopbench.tasks.loading import builtin_names, load_taskset
from loopbench.tasks.presets import preset_named


@click.group("tasks", cls=Group)
def tasks_group() -> None:
    """List task sets, make generated ones and check them."""


@tasks_group.command("list")
@click.option(
    "--tasks",
    "given",
    multiple=True,
    help="Also list this task set folder or data file (CSV, JSONL, Parquet, Inspect, "
    "promptfoo); repeat for several.",
)
@click.option(
    "--preset",
    help="Read the data files given as this dataset: gsm8k, mmlu, arc, boolq, squad, "
    "hellaswag (as run --preset does).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="A table, or a JSON list of objects with name, tasks (how many), tools, grader, "
    "mapping (what a data file's rows were read as) and, for a set offering an MCP "
    "server's tools, mcp (each server's name, server, version, tools and tools_hash).",
)
def list_command(given: tuple[str, ...], preset: str | None, fmt: str) -> None:
    """Every built-in and plugin task set, and those given: its tasks, tools and grader,
    and what a data file's rows were read as (a preset, or columns). A built-in that
    cannot load here (a missing extra) says why; a given one is refused."""
    if preset is not None:
        # guard: tasks-list-refuses-unknown-preset
        preset_named(preset)  # an unknown name refused first, listing the known ones
    sets = [_summary(name, built_in=True) for name in builtin_names()]
    sets += [_summary(spec, built_in=False, preset=preset) for spec in given]
    if fmt == "json":
        click.echo(json.dumps(sets, indent=2))
        return
    headers = ["name", "tasks", "grader", "read as", "tools"]
    rows = [
        [
            s["name"],
            s["tasks"] or "-",
            s["grader"] or "-",
            s["mapping"] or "-",
            ", ".join([*s["tools"], *_served(s.get("mcp", []))]) or "-",
        ]
        for s in sets
    ]
    if any("error" in s for s in sets):
        headers.append("why it did not load")
        rows = [[*row, error_line(s.get("error", ""))] for row, s in zip(rows, sets, strict=True)]
    # Names from files, for a terminal: one line each, control characters shown.
    rows = [[one_line(str(cell)) for cell in row] for row in rows]
    click.echo(tabulate(rows, headers, tablefmt="simple", disable_numparse=True))


def _summary(spec: str, built_in: bool, preset: str | None = None) -> dict[str, Any]:
    """What ``tasks list`` says of a set: named as ``--tasks`` takes it, read as ``preset``."""
    try:
        taskset = load_taskset(spec, preset=preset)
    except BadInput as exc:
        if not built_in:
            raise
        failed: dict[str, Any] = {"tasks": None, "tools": [], "grader": None, "mapping": None}
        return {"name": spec, **failed, "error": str(exc)}
    return {
        "name": spec,
        "tasks": len(taskset.tasks),
        "tools": list(taskset.tools),
        "grader": taskset.grader,
        "mapping": taskset.mapping or None,
        # Only for a set naming servers: every other set's summary is as it was.
        **({"mcp": [dict(server) for server in taskset.mcp_servers]} if taskset.mcp else {}),
    }


def _served(servers: list[dict[str, Any]]) -> list[str]:
    """Each MCP server's tools, as the tools column shows them: ``reverse (MCP counting)``."""
    return [f"{tool} (MCP {server['name']})" for server in servers for tool in server["tools"]]


@dataclass(frozen=True)
class Asked:
    """What the questions ask, as the flags write it (``--n``, ``--hops``, ``--seed``,
    ``--ambiguity``, ``--distractors``, ``--operations``, ``--public``), read into the
    generator's ``Options``."""

    n: int
    hops: str
    seed: int
    ambiguity: float
    distractors: float
    operations: str
    public: int


@tasks_group.command("generate")
@click.option("--n", "n", type=int, required=True, help="Questions to generate (1 to 5000).")
@click.option(
    "--hops",
    default="2-4",
    show_default=True,
    help="Look-ups each question needs: a range A-B or one number, from 1 to 4; "
    "1 is the easy level (a single look-up).",
)
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of everything drawn.")
@click.option(
    "--ambiguity",
    type=float,
    default=0.3,
    show_default=True,
    help="Share of depot entries titled locally ('Porvik yard (Veltrano)'), which the "
    "question's words cannot find; only the company's entry names them.",
)
@click.option(
    "--distractors",
    type=float,
    default=0.2,
    show_default=True,
    help="Share of companies given look-alikes: a company one vowel away with a depot in the "
    "same city, a person one vowel away, a workshop or history entry.",
)
@click.option(
    "--operations",
    default="",
    help="Comma-separated subset of lookup, difference, sum, ratio, comparison, which "
    "(default: every one the hop counts allow).",
)
@click.option(
    "--public",
    type=int,
    default=0,
    show_default=True,
    help="Also ask this many questions on real public facts (slice 'public'); facts age, "
    "so none by default.",
)
@click.option("--name", help="The set's name in taskset.toml. Default: the --out folder's name.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Folder to write; must be new, empty, or a set generated before (which is replaced).",
)
@bundled("asked", Asked)
def generate_command(asked: Asked, name: str | None, out: Path) -> None:
    """Write a task set over a fictional haulage world, every question checked by the
    reference solver; the same options give the same bytes."""
    with output_errors(out, flag="--out", hint=None):
        options = Options(
            n=asked.n,
            hops=parse_hops(asked.hops),
            seed=asked.seed,
            ambiguity=asked.ambiguity,
            distractors=asked.distractors,
            operations=parse_operations(asked.operations),
            public=asked.public,
            name=name or out.resolve().name,
        )
        made = generate(options)
        write_set(made, out)
    click.echo(f"{out}: {len(made.tasks)} tasks, {len(made.book['entries'])} entries")


@tasks_group.command("check")
@click.argument("folder", type=click.Path(path_type=Path))
def check_command(folder: Path) -> None:
    """Re-run the reference solver over a generated set; name every question whose answer,
    hop count or walk disagrees with what the set records."""
    taskset = load_taskset(folder)
    if not taskset.generated_by or taskset.encyclopedia is None or taskset.is_code:
        raise BadInput(
            f"{folder}: is not a generated set (its taskset.toml has no generated_by); check "
            "reads sets made by loopbench tasks generate"
        )
    found = disagreements(taskset)
    for task_id, what in found:
        click.echo(one_line(f"{task_id}: {what}"))
    total, wrong = len(taskset.tasks), len({task_id for task_id, _ in found})
    if wrong:
        click.echo(f"{folder}: the solver disagrees on {wrong} of {total} tasks")
    else:
        click.echo(f"{folder}: the solver agrees with all {total} tasks")
    raise SystemExit(1 if wrong else 0)
