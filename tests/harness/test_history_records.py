"""Records written before ``history`` was an option read as full replay, which is what
every tool loop did then: a folder from before compares with one from after as before."""

import json

from click.testing import CliRunner

from loopbench.harness.arms import parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.reading import read_records


def folder(path, options, arm="react"):
    path.mkdir()
    lines = [
        {
            "arm": arm,
            "task_id": f"t{i}",
            "repeat": 0,
            "status": "answered",
            "correct": i % 2 == 0,
            "answer": "84",
            "tokens_in": 100,
            "options": options,
        }
        for i in range(4)
    ]
    (path / "runs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_tool_loop_recorded_without_history_replayed_it_in_full(tmp_path):
    today = parse_arm("react").resolved
    assert today["history"] == "full"
    earlier = {k: v for k, v in today.items() if k != "history"}
    before = folder(tmp_path / "before", earlier)
    after = folder(tmp_path / "after", today)
    assert {r.options["history"] for r in read_records(before)} == {"full"}
    compared = CliRunner().invoke(main, ["compare", str(before), str(after), "--format", "json"])
    assert compared.exit_code == 0, compared.output
    (row,) = json.loads(compared.stdout)["arms"]
    assert row["option_changes"] == []
    # A pattern without tools gains no history.
    direct = folder(tmp_path / "direct", parse_arm("direct").resolved, arm="direct")
    assert "history" not in read_records(direct)[0].options


def test_runs_add_to_a_folder_written_before_history(tmp_path):
    out = tmp_path / "r"
    argv = ["run", "--model", "fake", "--limit", "2", "--arm", "react", "--out", str(out)]
    with FakeServer() as server:
        argv += ["--base-url", server.base_url, "--quiet"]
        assert CliRunner().invoke(main, argv).exit_code == 0
        lines = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
        for line in lines:
            del line["options"]["history"]  # as a release before the option wrote it
        (out / "runs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        again = CliRunner().invoke(main, [*argv, "--repeats", "2"])
    assert again.exit_code == 0, again.output
    records = read_records(out)
    assert len(records) == 4 and {r.arm for r in records} == {"react"}
    assert {r.options["history"] for r in records} == {"full"}
