"""--executor ray: a grid made on Ray workers gives the runs the local executor gives,
spreads one model's replicas, survives a killed worker and a killed driver, and the API
key reaches the workers only through their environment.

One local Ray instance (2 CPUs) serves the module; the drivers are the CLI, in this
process or in a subprocess joining that instance with --ray-address.
"""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply, default_responder, question_index
from loopbench.harness.results.reading import read_records, run_key
from tests.depot_answers import RIGHT

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray is not installed (pip install -e '.[ray]')",
)
SECRET = "sk-ray-test-secret-never-logged-0001"
DEPOT = loopbench.load_taskset("depot")
BY_QUESTION = {t.question: t for t in DEPOT.tasks}

# A pattern whose first run ends its worker process, as an out-of-memory kill would; it
# spares the test process, which also imports it to parse the arm.
DIES_ONCE = """
import os
from dataclasses import dataclass

import loopbench


class Options(loopbench.PatternOptions):
    pass


@dataclass(frozen=True)
class DiesOnce:
    options: Options
    name: str = "dies_once"

    def call_floor(self):
        return loopbench.CallFloor(1, "one answer")

    async def run(self, ctx):
        if os.getpid() != int(os.environ["DIES_ONCE_SPARES"]):
            try:
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
                marker = os.open(os.environ["DIES_ONCE_MARKER"], flags)
            except FileExistsError:
                pass
            else:
                os.write(marker, ctx.question.encode())
                os._exit(1)
        messages = (loopbench.Message("user", ctx.question),)
        reply = await ctx.model.complete(loopbench.ModelRequest(ctx.model_name, messages))
        return loopbench.Outcome("answered", answer=reply.message.content, steps=1)


@loopbench.register_pattern("dies_once", Options, "ends its worker process once; 1 call")
def dies_once(options):
    return DiesOnce(options)


@dataclass(frozen=True)
class AlwaysDies(DiesOnce):
    name: str = "always_dies"

    async def run(self, ctx):
        if os.getpid() != int(os.environ["DIES_ONCE_SPARES"]):
            os._exit(1)


@loopbench.register_pattern("always_dies", Options, "ends its worker process every time")
def always_dies(options):
    return AlwaysDies(options)
"""


def knows_the_public_half(body):
    """default_responder's moves, answering right on the public questions only."""
    messages = body["messages"]
    asked = messages[question_index(messages)]["content"].removeprefix("Question: ")
    task = BY_QUESTION.get(asked)
    answer = RIGHT[task.question] if task and task.slice == "public" else "no idea"
    reply = default_responder(body)
    return Reply(reply.content.replace("84", answer), reply.tool_calls, reply.finish_reason)


class Server(FakeServer):
    """The fake server, noting the Authorization headers it was sent."""

    def __init__(self, latency_s=0.0):
        super().__init__(knows_the_public_half, latency_s)
        self.authorizations = set()

    async def handle(self, request):
        self.authorizations.add(request.headers.get("authorization"))
        return await super().handle(request)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    ray = pytest.importorskip("ray")
    plugin = tmp_path_factory.mktemp("plugin")
    (plugin / "dies_once.py").write_text(DIES_ONCE)
    with pytest.MonkeyPatch.context() as env:  # what the workers' environment holds
        env.setenv("LOOPBENCH_API_KEY", SECRET)
        env.delenv("OPENAI_API_KEY", raising=False)
        env.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(plugin), os.getenv("PYTHONPATH")]))
        )
        env.setenv("DIES_ONCE_MARKER", str(plugin / "died"))
        env.setenv("DIES_ONCE_SPARES", str(os.getpid()))
        started = ray.init("local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
        try:
            yield SimpleNamespace(
                address=ray.get_runtime_context().gcs_address,
                logs=Path(started.address_info["session_dir"]),
                plugin=plugin,
                died=plugin / "died",
            )
        finally:
            ray.shutdown()


def run(out, *args, env=None):
    command = ["run", "--model", "fake", "--out", str(out), "--quiet", *args]
    env = {"LOOPBENCH_API_KEY": SECRET, **(env or {})}
    return CliRunner().invoke(main, command, env=env, catch_exceptions=False)


def outcomes(out):
    return {
        run_key(r): (r.status, r.answer, r.correct, r.turns, r.tokens_in, r.tokens_out)
        for r in read_records(out)
    }


def served_apart(server):
    """The later turns of runs whose first turn this server did not serve."""
    starts, later = set(), []
    for body in server.served.bodies:
        messages = body["messages"]
        asked = question_index(messages) + 1
        if len(messages) == asked:
            starts.add(json.dumps(messages))
        else:
            later.append(json.dumps(messages[:asked]))
    return [start for start in later if start not in starts]


@needs_ray
def test_ray_makes_the_runs_the_local_executor_makes_and_spreads_the_replicas(cluster, tmp_path):
    grid = ["--arm", "direct", "--arm", "react_text", "--repeats", "2"]
    with Server() as one, Server() as two:
        replicas = ["--base-url", one.base_url, "--base-url", two.base_url]
        local = run(tmp_path / "local", *replicas, *grid)
        apart = served_apart(one) + served_apart(two)
        before = (one.served.requests, two.served.requests)
        on_ray = run(tmp_path / "ray", *replicas, *grid, "--executor", "ray")
    assert local.exit_code == 0, local.output
    assert on_ray.exit_code == 0, on_ray.output
    made = outcomes(tmp_path / "ray")
    assert made == outcomes(tmp_path / "local") and len(made) == 2 * 2 * len(DEPOT.tasks)
    assert {r[2] for r in made.values()} == {True, False}
    assert min(before) > 0 and one.served.requests > before[0] and two.served.requests > before[1]
    assert apart == [] and served_apart(one) == served_apart(two) == []  # a run keeps to one
    assert one.authorizations == two.authorizations == {f"Bearer {SECRET}"}
    for written in [*(tmp_path / "ray").iterdir(), *cluster.logs.rglob("*")]:
        assert not written.is_file() or SECRET.encode() not in written.read_bytes(), written
    assert SECRET not in on_ray.output


@needs_ray
def test_a_killed_worker_is_replaced_and_its_runs_are_made_once(
    cluster, tmp_path, monkeypatch, request, registries
):
    monkeypatch.syspath_prepend(cluster.plugin)
    request.addfinalizer(lambda: sys.modules.pop("dies_once", None))
    with Server() as server:
        result = run(
            tmp_path / "r",
            "--base-url", server.base_url, "--plugin", "dies_once",
            "--arm", "direct", "--arm", "dies_once", "--executor", "ray",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert cluster.died.read_text() in BY_QUESTION  # a worker died on that run
    records = read_records(tmp_path / "r")
    keys = [run_key(r) for r in records]
    assert len(keys) == len(set(keys)) == 2 * len(DEPOT.tasks)
    assert {r.status for r in records} == {"answered"}


@needs_ray
def test_a_run_that_keeps_killing_its_worker_is_named_and_the_rest_recorded(
    cluster, tmp_path, monkeypatch, request, registries
):
    monkeypatch.syspath_prepend(cluster.plugin)
    request.addfinalizer(lambda: sys.modules.pop("dies_once", None))
    with Server() as server:
        result = run(
            tmp_path / "r",
            "--base-url", server.base_url, "--plugin", "dies_once", "--limit", "1",
            "--arm", "direct", "--arm", "always_dies", "--concurrency", "1", "--executor", "ray",
        )  # fmt: skip
    assert result.exit_code == 2, result.output
    task = DEPOT.tasks[0].id
    assert f"worker having died 4 times: always_dies on {task} #0;" in result.output
    assert [r.arm for r in read_records(tmp_path / "r")] == ["direct"]


@needs_ray
def test_a_killed_driver_resumes_with_nothing_missing_or_doubled(cluster, tmp_path):
    out = tmp_path / "r"
    with Server(latency_s=0.05) as server:
        command = [
            sys.executable, "-m", "loopbench.harness.cli", "run", "--model", "fake",
            "--base-url", server.base_url, "--arm", "direct", "--arm", "cot",
            "--repeats", "3", "--concurrency", "2", "--quiet", "--out", str(out),
            "--executor", "ray", "--ray-address", cluster.address,
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        runs = out / "runs.jsonl"
        # the driver is killed once some runs are written: the deadline only bounds a
        # machine so loaded that Ray's start takes long (30 s was once not enough)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not runs.exists() or runs.stat().st_size < 8000):
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        partial = len(runs.read_text().splitlines())
        assert 0 < partial < 2 * 12 * 3
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    keys = [run_key(r) for r in read_records(out)]
    assert len(keys) == len(set(keys)) == 2 * 12 * 3
    assert f"{2 * 12 * 3 - partial} runs done, {partial} already recorded" in finished.stderr


@needs_ray
def test_a_worker_without_the_key_says_where_to_set_it(cluster, tmp_path):
    with Server() as server:
        result = run(
            tmp_path / "r", "--base-url", server.base_url, "--arm", "direct",
            "--executor", "ray", "--api-key-env", "KEY_ON_THE_DRIVER_ONLY",
            env={"KEY_ON_THE_DRIVER_ONLY": "sk-driver-only-0002"},
        )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "neither KEY_ON_THE_DRIVER_ONLY nor OPENAI_API_KEY is set" in result.output
    assert "sk-driver-only" not in result.output and server.served.requests == 0


@needs_ray
def test_the_python_api_runs_a_grid_on_ray(cluster, tmp_path):
    from loopbench.harness.config import ModelEntry, RunConfig
    from loopbench.harness.executors.ray import RayExecutor, WorkerSetup

    with Server() as server:
        setup = WorkerSetup(RunConfig(models=[ModelEntry(name="fake", base_url=server.base_url)]))
        with RayExecutor(setup) as executor:
            results = loopbench.Experiment(
                "depot", ["cot"], model_name="fake", base_url=server.base_url,
                out=tmp_path / "r", settings=loopbench.RunSettings(executor=executor),
            ).run()  # fmt: skip
    assert results.ran == len(DEPOT.tasks) == server.served.requests
    # The config names no key variable: the default one, read in the worker's environment.
    assert server.authorizations == {f"Bearer {SECRET}"}


@needs_ray
def test_an_address_where_nothing_listens_is_refused_at_once(tmp_path):
    began = time.monotonic()
    result = CliRunner().invoke(
        main,
        ["run", "--arm", "direct", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
         "--executor", "ray", "--ray-address", "127.0.0.1:1", "--out", str(tmp_path / "r")],
    )  # fmt: skip
    assert result.exit_code == 2 and "nothing answers there" in result.output, result.output
    assert time.monotonic() - began < 10 and not (tmp_path / "r").exists()


def test_a_run_handed_over_twice_is_written_once(tmp_path):
    async def twice(runner, jobs, concurrency, finish):  # as a remote task retried late may
        for job in jobs:
            record, trace = await runner.run_one(job)
            finish(record, trace.to_json())
            finish(record.model_copy(update={"run_id": "again"}), trace.to_json())

    results = loopbench.Experiment(
        "depot", ["direct"], model=lambda _: "84", out=tmp_path / "r",
        settings=loopbench.RunSettings(executor=twice),
    ).run()  # fmt: skip
    assert results.ran == len(read_records(tmp_path / "r")) == len(DEPOT.tasks)


def test_without_ray_the_executor_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    result = CliRunner().invoke(
        main,
        ["run", "--arm", "direct", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
         "--executor", "ray", "--out", str(tmp_path / "r")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "pip install -e '.[ray]'" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--ray-address", "auto"], "--ray-address applies only with --executor ray"),
        (["--executor", "ray", "--paired"], "Ray workers do not share them"),
        (["--executor", "ray", "--cache", "c"], "Ray workers do not share them"),
    ],
)
def test_what_ray_workers_cannot_do_is_refused_before_anything_runs(tmp_path, args, says):
    base = ["run", "--arm", "direct", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "r"), *args])
    assert result.exit_code == 2 and says in result.output, result.output
    assert not (tmp_path / "r").exists()


@needs_ray
def test_ray_workers_start_their_own_mcp_servers_and_leave_none(cluster, tmp_path):
    import shutil

    example = Path(__file__).parents[2] / "examples" / "mcp"
    served = tmp_path / "served"
    shutil.copytree(example, served)
    book = Path(__file__).parents[2] / "loopbench" / "tasks" / "depot" / "encyclopedia.json"
    toml = (
        (served / "taskset.toml")
        .read_text()
        .replace("../../loopbench/tasks/depot/encyclopedia.json", str(book))
    )
    (served / "taskset.toml").write_text(toml)

    def servers():
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if str(served).encode() in cmdline.read_bytes():
                    found.append(cmdline.parent.name)
            except OSError:
                continue
        return found

    grid = ["--tasks", str(served), "--arm", "react", "--limit", "4"]
    with Server() as server:
        local = run(tmp_path / "local", "--base-url", server.base_url, *grid)
        on_ray = run(tmp_path / "ray", "--base-url", server.base_url, *grid, "--executor", "ray")
    assert local.exit_code == 0, local.output
    assert on_ray.exit_code == 0, on_ray.output
    made = outcomes(tmp_path / "ray")
    assert made == outcomes(tmp_path / "local") and len(made) == 4
    assert sum(r.tool_calls for r in read_records(tmp_path / "ray")) > 0
    deadline = time.monotonic() + 30
    while servers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert servers() == []
