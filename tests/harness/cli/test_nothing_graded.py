"""A run that graded nothing does not pass: ``run`` exits 3 naming the arm and its commonest
error (with the hint to add /v1 when the endpoint 404s at /chat/completions), and
``compare`` refuses a side with no graded run."""

import pandas as pd
import pytest
from aiohttp import web
from click.testing import CliRunner

from loopbench.harness.api import load
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.fakes.loopback import LoopbackServer
from loopbench.harness.models.openai_compat import missing_v1_hint
from loopbench.harness.report.compare import CompareError
from loopbench.harness.report.ungraded import NOTHING_GRADED, ungraded
from loopbench.harness.results.reading import read_records


def run(args):
    return CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"}, catch_exceptions=False)


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


def direct(url, out, *more):
    return ["run", "--base-url", url, "--model", "fake", "--tasks", "depot", "--limit", "2",
            "--arm", "direct", "--quiet", "--out", str(out), *more]  # fmt: skip


def test_a_base_url_without_v1_exits_3_with_the_path_and_the_hint(server, tmp_path):
    url = server.base_url.removesuffix("/v1")
    result = run(direct(url, tmp_path / "r"))
    assert result.exit_code == NOTHING_GRADED == 3
    last = result.stderr.strip().splitlines()[-1]
    said = "Error: arm 'direct' graded nothing: all 2 of its runs ended in api_error"
    assert last.startswith(said)
    assert "HTTP 404" in last and "nothing is served at /chat/completions" in last
    assert f"add /v1 to the base URL (--base-url {url}/v1)" in last
    records = read_records(tmp_path / "r")
    assert all("add /v1" in r.error for r in records)  # the record says it too
    again = run(direct(url, tmp_path / "r"))  # resumed, nothing run: still nothing graded
    assert again.exit_code == 3 and "graded nothing" in again.stderr.splitlines()[-1]


class NotFound(LoopbackServer):
    """A server with nothing at /chat/completions, saying so in a long page."""

    path = "/chat/completions"

    async def handle(self, request):
        page = "<html><body>" + "Not Found. " * 300 + "</body></html>"
        return web.Response(text=page, status=404, content_type="text/html")


def test_a_long_404_page_keeps_the_hint_in_the_line(tmp_path):
    with NotFound() as server:
        url = f"http://127.0.0.1:{server.port}"
        result = run(direct(url, tmp_path / "r"))
    assert result.exit_code == 3
    last = result.stderr.strip().splitlines()[-1]
    assert "HTTP 404" in last and last.endswith(f"add /v1 to the base URL (--base-url {url}/v1))")


def test_a_run_with_one_graded_run_exits_0(tmp_path):
    failing = iter([Reply(status=400)])
    with FakeServer(lambda body: next(failing, None) or Reply("Answer: 1")) as srv:
        result = run(direct(srv.base_url, tmp_path / "r"))
    statuses = sorted(r.status for r in read_records(tmp_path / "r"))
    assert statuses == ["answered", "api_error"]
    assert result.exit_code == 0 and "graded nothing" not in result.stderr


def test_compare_refuses_a_side_with_no_graded_run(server, tmp_path):
    assert run(direct(server.base_url, tmp_path / "good")).exit_code == 0
    assert run(direct(server.base_url.removesuffix("/v1"), tmp_path / "bad")).exit_code == 3
    result = run(["compare", str(tmp_path / "good"), str(tmp_path / "bad")])
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert f"{tmp_path / 'bad'}: no run in it was graded (all 2 ended" in line
    assert "most in api_error" in line


def test_the_api_refuses_a_side_with_no_graded_run_as_compare_does(server, tmp_path):
    assert run(direct(server.base_url, tmp_path / "good")).exit_code == 0
    assert run(direct(server.base_url.removesuffix("/v1"), tmp_path / "bad")).exit_code == 3
    good, bad = load(tmp_path / "good"), load(tmp_path / "bad")
    with pytest.raises(CompareError, match="bad: no run in it was graded"):
        bad.compare(good)
    with pytest.raises(CompareError, match="bad: no run in it was graded"):
        good.compare(bad)
    assert good.compare(good).arms[0].regressed is False


def test_a_versioned_base_url_gets_no_hint():
    assert missing_v1_hint("http://127.0.0.1:8000/v1") == ""
    assert missing_v1_hint("https://api.example.com/v1beta/") == ""
    assert missing_v1_hint("http://u:pw@127.0.0.1:8000/api") == (
        "nothing is served at /api/chat/completions: add /v1 to the base URL "
        "(--base-url http://127.0.0.1:8000/api/v1)"
    )
    assert "pw" not in missing_v1_hint("http://u:pw@127.0.0.1:8000/?key=pw")


def test_an_arm_is_ungraded_per_model_and_only_when_every_run_failed():
    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b", "a"],
            "arm": ["cot", "cot", "cot", "cot", "direct"],
            "status": ["api_error", "tool_error", "answered", "api_error", "pattern_error"],
            "error": ["HTTP 404: x", "HTTP 404: x", "", "HTTP 500", "boom"],
        }
    )
    found = ungraded(frame)
    assert found is not None
    assert found.arms == ("cot on a", "direct on a") and found.runs == 3
    assert found.line() == (
        "arms 'cot on a', 'direct on a' graded nothing: all 3 of their runs ended in "
        "api_error (commonest error: HTTP 404: x)"
    )
    assert ungraded(frame[frame["model"] == "b"]) is None
