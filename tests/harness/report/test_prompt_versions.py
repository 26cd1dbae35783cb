"""Prompt versions in the reports: two prompt files of one pattern are two arms, in the
table and in compare; compare says when an arm's prompts differ between the two sides
(markdown, JSON and JUnit), by the hash the records keep, and reads records written
before prompts were slots (no ``prompts_hash``) as the built-in prompts."""

import json
import xml.etree.ElementTree as ET

from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.results.reading import read_records

TERSE = "Think briefly. End with a line 'Answer: X'."
WORDY = "Think at length, step by step. End with a line 'Answer: X'."


def prompt_file(folder, stem, text):
    path = folder / f"{stem}.toml"
    path.write_text(f"step = {json.dumps(text)}\n")
    return path


def run(out, *arms):
    loopbench.Experiment("depot", list(arms), model=lambda _: "Answer: 84", out=out, limit=2).run()
    return out


def cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def hashes(folder):
    return {r.arm: r.prompts_hash for r in read_records(folder)}


def test_two_prompt_versions_of_one_pattern_are_two_rows_and_two_arms(tmp_path):
    terse, wordy = prompt_file(tmp_path, "terse", TERSE), prompt_file(tmp_path, "wordy", WORDY)
    arms = ["cot", f"cot:prompts={terse}", f"cot:prompts={wordy}"]
    before, after = run(tmp_path / "before", *arms), run(tmp_path / "after", *arms)
    rows = json.loads(cli("table", after, "--format", "json"))
    assert [row["arm"] for row in rows] == ["cot", "cot:prompts=terse", "cot:prompts=wordy"]
    assert all(row["n"] == 2 for row in rows)
    compared = json.loads(cli("compare", before, after, "--format", "json"))
    assert [row["arm"] for row in compared["arms"]] == [row["arm"] for row in rows]
    assert all(row["prompts_change"] is None for row in compared["arms"])
    assert compared["only_before"] == compared["only_after"] == []


def test_compare_says_when_an_arms_prompts_differ_in_every_format(tmp_path):
    terse = prompt_file(tmp_path, "terse", TERSE)
    before = run(tmp_path / "before", "cot", f"cot:prompts={terse}")
    prompt_file(tmp_path, "terse", TERSE + " Be exact.")  # the same file, edited
    after = run(tmp_path / "after", "cot", f"cot:prompts={terse}")
    was, now = hashes(before)["cot:prompts=terse"], hashes(after)["cot:prompts=terse"]
    assert was and now and was != now
    said = f"{was} → {now}"

    rows = {
        r["arm"]: r for r in json.loads(cli("compare", before, after, "--format", "json"))["arms"]
    }
    assert rows["cot:prompts=terse"]["prompts_change"] == said
    assert rows["cot:prompts=terse"]["option_changes"] == []  # said by hash, not as text
    assert rows["cot"]["prompts_change"] is None

    markdown = cli("compare", before, after, "--format", "md")
    assert f"- cot:prompts=terse: {said}" in markdown
    assert "- cot: " not in markdown  # the arm whose prompts are the same is not named

    suites = ET.fromstring(cli("compare", before, after, "--format", "junit"))
    for suite in suites:
        for case in suite.iter("testcase"):
            text = ET.tostring(case, encoding="unicode")
            assert (said in text) == (suite.get("name") == "cot:prompts=terse"), case.get("name")


def test_records_without_a_prompts_hash_read_as_the_built_in_prompts(tmp_path):
    terse = prompt_file(tmp_path, "terse", TERSE)
    before = run(tmp_path / "before", "cot", f"cot:prompts={terse}")
    after = run(tmp_path / "after", "cot", f"cot:prompts={terse}")
    # An older writer: no prompts_hash on any line.
    runs = before / "runs.jsonl"
    lines = [json.loads(line) for line in runs.read_text().splitlines()]
    for line in lines:
        del line["prompts_hash"]
    runs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert set(hashes(before).values()) == {None}

    rows = {
        r["arm"]: r for r in json.loads(cli("compare", before, after, "--format", "json"))["arms"]
    }
    assert rows["cot"]["prompts_change"] is None  # neither side overrode a slot
    assert rows["cot:prompts=terse"]["prompts_change"] == (
        f"built-in → {hashes(after)['cot:prompts=terse']}"
    )
