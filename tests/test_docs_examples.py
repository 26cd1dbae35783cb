"""Every shell and Python example in README.md and docs/*.md runs as written, offline.

How a page is read:

- A fenced block tagged ``sh``, ``bash``, ``shell``, ``console`` or ``python`` is an
  example. A page's examples run in the order it gives them, in a folder of the page's
  own that stands for a checkout's root: empty but for the repository's ``bench/`` and
  committed ``results/reference/``, linked in (``experiments/`` ships with the package,
  which finds its files by these paths too). A shell block runs in bash with ``-e -o
  pipefail``; a console block runs its ``$`` lines (and their ``\\`` continuations), the
  rest being their output; a python block runs with this interpreter.
- Blocks tagged ``text``, ``yaml``, ``toml``, ``json`` or ``gitignore`` are listings,
  never run; every fence names one of these languages, so no example escapes by having
  none. (docs/ci.md's workflow and its recording are also run, as GitHub Actions would,
  by tests/test_ci_workflow.py.)
- A block whose first line is ``# file: PATH`` (in any language) is a file the page asks
  the reader to write: it is written to PATH, less that line, not run, and the page's
  later examples use it.
- Output: a ``text`` block right after an example (nothing but blank lines between) is
  what that example prints, as are a console block's lines that are not commands. Each
  such line must appear in what the example printed (stdout and stderr together), in
  order; a line ``...`` stands for any lines.
- One exclusion, by rule: the lines ``make demo`` and ``make test`` (the README's two
  commands, each possibly followed by a comment) are shown, never run: they install a
  virtualenv, build llama.cpp, and run the whole test suite, this test included.

What stands for the reader's machine: loopbench as installed here (this interpreter's
``bin`` on PATH, this checkout first on PYTHONPATH), and an endpoint as the README's
``export`` lines set one (LOOPBENCH_BASE_URL, LOOPBENCH_MODEL, LOOPBENCH_API_KEY), the
endpoint being a fake OpenAI-compatible server on loopback (loopbench.harness.fakes.FakeServer,
which drives every shipped pattern to an answer, with the fake Batch API beside it). The
URLs the examples name are mapped to loopback servers of this test before a block runs:
``https://api.openai.com/v1`` and a local vLLM's ``http://localhost:8000/v1`` to that
fake, the two replicas ``http://vllm-1:8000/v1`` and ``http://vllm-2:8000/v1`` to fakes of
their own, Anthropic's
``https://api.anthropic.com`` to a fake of its Messages API (and its Message Batches), and an
OTLP receiver's ``http://localhost:4318`` to a receiver that accepts every POST. Any
other URL in an example fails the test, so no example reaches beyond loopback. For
``--ray-address auto`` (docs/ray.md) the test starts a local Ray instance and names it
in RAY_ADDRESS, which is where ``auto`` looks first; without Ray installed that page is
skipped.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from loopbench.harness.fakes.anthropic_batch_server import AnthropicBatchServer
from loopbench.harness.fakes.batch_server import FakeBatchServer
from loopbench.harness.fakes.fake_server import FakeServer

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"sh", "bash", "shell", "console"}
EXAMPLES = SHELLS | {"python"}
LISTINGS = {"text", "yaml", "toml", "json", "gitignore"}
SHOWN_ONLY = re.compile(r"^make (demo|test)(\s+#.*)?$")
FILE = re.compile(r"# file: (\S+)\n")
URL = re.compile(r"https?://[^\s'\"`)\]]+")
# Linked into each page's folder, as a checkout holds them.
CHECKOUT = ("bench", "results/reference")
TIMEOUT_S = 120
KEY = "no-key-in-tests"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    text: str
    output: str | None = None
    """The ``text`` block that follows it, when one does: what it prints."""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced(page: Path) -> list[Block]:
    """Every fenced block of a page, indented ones (in a list) too, each example with the
    output block that follows it."""
    blocks: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    at = 0
    last_end = -2
    while at < len(lines):
        opening = re.match(r"^(\s*)```(\S*)\s*$", lines[at])
        if opening is None:
            at += 1
            continue
        indent, language = opening.groups()
        start = at
        at += 1
        body = []
        while not lines[at].strip().startswith("```"):
            body.append(lines[at].removeprefix(indent))
            at += 1
        text = "\n".join(body) + "\n"
        follows = blocks and all(not line.strip() for line in lines[last_end + 1 : start])
        if language == "text" and follows and blocks[-1].language in EXAMPLES:
            blocks[-1] = replace(blocks[-1], output=text)
        blocks.append(Block(page, start + 1, language, text))
        last_end = at
        at += 1
    return blocks


def examples(page: Path) -> list[Block]:
    """The page's examples and the files it asks to write, in order."""
    return [b for b in fenced(page) if b.language in EXAMPLES or FILE.match(b.text)]


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP receiver on loopback that accepts every POST."""

    def __init__(self) -> None:
        class Accept(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Accept)
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def loopback() -> Iterator[dict[str, str]]:
    """The loopback servers, by the URL the examples write for them."""
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, args=(0.05,), daemon=True).start()
    with (
        FakeBatchServer(keep_bodies=False) as main,  # its Batch API too (docs/batch.md)
        FakeServer(keep_bodies=False) as replica,
        AnthropicBatchServer() as anthropic,  # its Message Batches too
    ):
        yield {
            "https://api.openai.com/v1": main.base_url,
            "https://api.anthropic.com": anthropic.base_url,
            "http://localhost:8000/v1": main.base_url,
            "http://vllm-1:8000/v1": main.base_url,
            "http://vllm-2:8000/v1": replica.base_url,
            "http://localhost:4318": receiver.url,
        }
    receiver.shutdown()
    receiver.server_close()


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A local Ray instance (docs/ray.md's cluster): its address. Its workers find the key
    in their environment, as docs/ray.md asks of a cluster's nodes."""
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LOOPBENCH_API_KEY", KEY)
        ray.init("local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
        try:
            yield ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()


def on_loopback(text: str, loopback: dict[str, str], where: str) -> str:
    """The example with every URL it names mapped to this test's loopback servers."""
    for url in set(URL.findall(text)):
        mapped = next((u for u in loopback if url.startswith(u)), None)
        assert mapped is not None, f"{where}: {url} is not mapped to loopback by this test"
        text = text.replace(url, loopback[mapped] + url.removeprefix(mapped))
    return text


def shell_script(block: Block) -> tuple[str, list[str]]:
    """What a shell block runs (less the shown-only lines), and the output it shows."""
    if block.language != "console":
        lines = [line for line in block.text.splitlines() if not SHOWN_ONLY.match(line)]
        return "\n".join(lines) + "\n", (block.output or "").splitlines()
    commands: list[str] = []
    shown: list[str] = []
    continued = False
    for line in block.text.splitlines():
        if line.startswith("$ ") or continued:
            commands.append(line.removeprefix("$ "))
            continued = line.endswith("\\")
        else:
            shown.append(line)
    return "\n".join(commands) + "\n", shown


def check_output(printed: str, shown: list[str], where: str) -> None:
    """Each line shown appears in what was printed, in order (``...``: any lines)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    at = 0
    for line in (s.rstrip() for s in shown):
        if line in ("", "..."):
            continue
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            raise AssertionError(
                f"{where}: the page shows a line the example did not print:\n{line}\n"
                f"--- printed:\n{printed}"
            ) from None


def environment(loopback: dict[str, str], ray: str | None) -> dict[str, str]:
    """This machine's environment less any endpoint, key or Ray address, then the README's
    endpoint variables, naming the fake (and the test's Ray instance: ``ray.init`` has put
    its authentication mode in this environment, as a cluster node's holds it)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("LOOPBENCH_", "OPENAI_", "ANTHROPIC_")) and k != "RAY_ADDRESS"
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["LOOPBENCH_BASE_URL"] = loopback["https://api.openai.com/v1"]
    env["LOOPBENCH_MODEL"] = "gpt-4o-mini"
    env["LOOPBENCH_API_KEY"] = KEY
    env["MPLBACKEND"] = "Agg"
    if ray is not None:
        env["RAY_ADDRESS"] = ray
    return env


def run_block(block: Block, folder: Path, env: dict[str, str], loopback: dict[str, str]) -> int:
    """Run one example (or write the file it is); the number of commands it ran."""
    named = FILE.match(block.text)
    if named is not None:
        path = folder / named.group(1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.text.split("\n", 1)[1], encoding="utf-8")
        return 0
    text = on_loopback(block.text, loopback, block.where)
    if block.language == "python":
        command, shown = [sys.executable, "-c", text], (block.output or "").splitlines()
    else:
        script, shown = shell_script(Block(block.page, block.line, block.language, text))
        if not re.sub(r"(?m)^\s*#.*$", "", script).strip():
            return 0  # shown only: make demo, make test
        command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script]
    ran = subprocess.run(
        command,
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert ran.returncode == 0, f"{block.where}: exit {ran.returncode}\n{ran.stdout}"
    check_output(ran.stdout, shown, block.where)
    return 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_on_the_page_runs_as_written(
    page: Path, tmp_path: Path, loopback: dict[str, str], request: pytest.FixtureRequest
) -> None:
    blocks = examples(page)
    if not blocks:
        pytest.skip(f"{page.name} has no example")
    ray = None
    if any("--executor ray" in b.text or "RayExecutor" in b.text for b in blocks):
        if importlib.util.find_spec("ray") is None:
            pytest.skip("ray is not installed (pip install -e '.[ray]')")
        ray = request.getfixturevalue("ray_cluster")
    folder = tmp_path / "checkout"
    for name in CHECKOUT:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).symlink_to(ROOT / name)
    env = environment(loopback, ray)
    ran = sum(run_block(block, folder, env, loopback) for block in blocks)
    assert ran > 0, f"{page.name}: its examples are all shown only"


def test_every_fence_names_a_language_the_test_knows() -> None:
    for page in PAGES:
        for block in fenced(page):
            assert block.language in EXAMPLES | LISTINGS, (
                f"{block.where}: tag the fence with a language ({sorted(EXAMPLES)} run; "
                f"{sorted(LISTINGS)} are listings)"
            )


def test_the_readme_shows_the_two_commands_without_this_test_running_them() -> None:
    shown = [b for b in examples(ROOT / "README.md") if b.language in SHELLS]
    lines = [line for b in shown for line in b.text.splitlines()]
    assert any(line.startswith("make demo") for line in lines)
    assert any(line.startswith("make test") for line in lines)
    assert all(SHOWN_ONLY.match(line) for line in lines if line.startswith("make "))


def test_the_index_links_every_page_and_every_link_resolves() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "index.md":
            assert f"]({page.name})" in index, f"docs/index.md does not link {page.name}"
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{page.relative_to(ROOT)}: {target} does not exist"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked), f"{page.relative_to(ROOT)}: no #{anchor}"


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings."""
    made = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        made.add(slug)
    return made
