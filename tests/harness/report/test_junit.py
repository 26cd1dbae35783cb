"""``compare --format junit``: valid JUnit XML, a case per arm and criterion, failed when
regressed with the figures and flipped tasks, skipped when cost cannot be judged."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.report.junit import CLASSNAME, xml_safe

from .test_compare import before_keys, write
from .test_table import record

SCHEMA = xmlschema.XMLSchema(Path(__file__).parents[2] / "fixtures" / "junit" / "junit.xsd")


def junit(before, after, *more):
    result = CliRunner().invoke(main, ["compare", str(before), str(after), "--format", "junit"])
    payload = CliRunner().invoke(
        main, ["compare", str(before), str(after), "--format", "json", *more]
    )
    return result, json.loads(payload.stdout) if payload.exit_code < 2 else None


def parsed(document: bytes) -> ET.Element:
    """The document, valid against the schema (which raises on the first violation), with
    every count it states equal to the cases it holds."""
    SCHEMA.validate(document.decode("utf-8"))
    root = ET.fromstring(document)
    for element, cases in [(root, root.findall("testsuite/testcase"))] + [
        (suite, suite.findall("testcase")) for suite in root
    ]:
        assert element.get("tests") == str(len(cases))
        assert element.get("failures") == str(sum(c.find("failure") is not None for c in cases))
        assert element.get("errors") == "0"
        if element.tag == "testsuite":
            assert element.get("skipped") == str(sum(c.find("skipped") is not None for c in cases))
    return root


def cases(root: ET.Element) -> dict[str, ET.Element]:
    found = {case.get("name"): case for case in root.iter("testcase")}
    assert all(case.get("classname") == CLASSNAME for case in found.values())
    return found


def outcome(case: ET.Element) -> str:
    return next((child.tag for child in case if child.tag != "system-out"), "passed")


def runs_folder(folder: Path, runs) -> Path:
    """A results folder of the given runs: (arm, task, repeat, correct, fields to set)."""
    folder.mkdir()
    lines = [
        record(arm=arm, task=task, repeat=repeat, correct=correct)
        .model_copy(update={"task_set": "s", **fields})
        .model_dump_json()
        for arm, task, repeat, correct, fields in runs
    ]
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_a_regressed_arm_fails_with_its_figures_and_flipped_tasks_and_others_pass(tmp_path):
    before = write(tmp_path / "b", {"react": 0.8, "cot": 0.5}, seed=1)
    right = [key for key in before_keys(before, "react") if key[2]][:11]
    flips = {(t, r) for t, r, _ in right}
    after = write(tmp_path / "a", {"react": 0.8, "cot": 0.5}, seed=1, flip=flips, flip_arm="react")
    result, payload = junit(before, after)
    assert result.exit_code == 1 and "REGRESSED: react" in result.stderr
    found = cases(parsed(result.stdout_bytes))
    assert set(found) == {
        "accuracy of react",
        "cost per correct of react",
        "accuracy of cot",
        "cost per correct of cot",
    }
    assert [outcome(found[f"accuracy of {arm}"]) for arm in ("react", "cot")] == [
        "failure",
        "passed",
    ]
    assert outcome(found["cost per correct of cot"]) == "passed"
    react = next(a for a in payload["arms"] if a["arm"] == "react")
    failure = found["accuracy of react"].find("failure")
    message = failure.get("message")
    assert message.startswith(react["why"]) and failure.get("type") == "regression"
    for figure in (
        f"accuracy {react['accuracy_before']:.1%} → {react['accuracy_after']:.1%}",
        f"difference {react['difference'] * 100:+.1f} points",
        f"[95% CI {react['ci_low'] * 100:+.1f}, {react['ci_high'] * 100:+.1f}]",
        f"paired p = {react['p_value']:.3g}",
        f"{react['n_pairs']} pairs on {react['tasks']} tasks",
        f"right → wrong: {', '.join(react['right_to_wrong'])}",
        "wrong → right: —",
    ):
        assert figure in message and figure in failure.text
    assert len(react["right_to_wrong"]) == 11


def test_without_a_regression_nothing_fails(tmp_path):
    before = write(tmp_path / "b", {"react": 0.6, "cot": 0.5}, seed=3)
    after = write(tmp_path / "a", {"react": 0.6, "cot": 0.5}, seed=3, flip={("t1", 0)})
    result, _ = junit(before, after)
    assert result.exit_code == 0, result.stderr
    root = parsed(result.stdout_bytes)
    assert root.get("tests") == "4" and root.get("failures") == "0"
    assert {outcome(c) for c in cases(root).values()} == {"passed"}


def test_a_cost_rise_alone_fails_the_cost_case_only(tmp_path):
    runs = [("react", f"t{i}", r, True, {}) for i in range(12) for r in range(3)]
    before = runs_folder(tmp_path / "b", runs)
    dearer = {"tokens_in": 3000}
    after = runs_folder(tmp_path / "a", [(*run[:4], dearer) for run in runs])
    result, payload = junit(before, after)
    assert result.exit_code == 1
    found = cases(parsed(result.stdout_bytes))
    assert outcome(found["accuracy of react"]) == "passed"
    failure = found["cost per correct of react"].find("failure")
    [arm] = payload["arms"]
    before_cost, after_cost = arm["cost_per_correct_before"], arm["cost_per_correct_after"]
    assert failure.get("message").startswith("cost per correct rose ")
    assert f"cost per correct ${before_cost:.6f} → ${after_cost:.6f}" in failure.text


@pytest.mark.parametrize(
    ("after_fields", "correct_after", "why"),
    [
        ({"usage_missing": 1}, True, "cost not compared: 36 model calls reported no token usage"),
        ({"model": "no-such-model"}, True, "cost not compared: runs without a price in the"),
        ({}, False, "cost not compared: no run was correct in the candidate"),
    ],
    ids=["calls without usage", "no price", "nothing correct"],
)
def test_cost_that_cannot_be_judged_is_skipped_with_the_reason(
    tmp_path, after_fields, correct_after, why
):
    runs = [("react", f"t{i}", r, True, {}) for i in range(12) for r in range(3)]
    before = runs_folder(tmp_path / "b", runs)
    if after_fields.get("model"):  # no price on either side: one model throughout
        before = runs_folder(tmp_path / "b2", [(*run[:4], after_fields) for run in runs])
    after = runs_folder(
        tmp_path / "a", [(arm, t, r, correct_after, after_fields) for arm, t, r, _, _ in runs]
    )
    result, _ = junit(before, after)
    found = cases(parsed(result.stdout_bytes))
    skipped = found["cost per correct of react"].find("skipped")
    assert skipped is not None and skipped.get("message").startswith(why)
    assert outcome(found["accuracy of react"]) == ("passed" if correct_after else "failure")
    assert result.exit_code == (0 if correct_after else 1)


ODD_NAMES = [
    "a<b & c>\"d'e",
    "x]]>y",
    "tab\there\nand a new line",
    "emoji 🙂 and ünïcödé",
]
UNWRITABLE = ["esc\x1b[31mred", "bell\x07", "\ufffe not a character"]


def test_arm_names_and_task_ids_of_any_characters_survive(tmp_path):
    arms = ODD_NAMES + UNWRITABLE
    tasks = [f"task {i} <&\x1b> {arm}" for i, arm in enumerate(arms)]
    runs = [(arm, task, r, True, {}) for arm in arms for task in tasks for r in range(2)]
    before = runs_folder(tmp_path / "b", runs)
    after = runs_folder(tmp_path / "a", [(a, t, r, False, {}) for a, t, r, _, _ in runs])
    result, payload = junit(before, after)
    assert result.exit_code == 1
    root = parsed(result.stdout_bytes)
    found = cases(root)
    for arm in ODD_NAMES:  # characters XML holds come back as they were
        assert outcome(found[f"accuracy of {arm}"]) == "failure"
        assert arm in [suite.get("name") for suite in root]
    for arm in UNWRITABLE:  # the others as escapes, the rest of the name kept
        assert outcome(found[f"accuracy of {arm.encode('unicode_escape').decode()}"]) == "failure"
    flipped = next(a for a in payload["arms"] if a["arm"] == ODD_NAMES[0])["right_to_wrong"]
    message = found[f"accuracy of {ODD_NAMES[0]}"].find("failure").get("message")
    assert f"right → wrong: {xml_safe(', '.join(flipped))}" in message
    assert "task 0 <&\\x1b>" in message


def test_xml_safe_escapes_only_what_xml_cannot_hold():
    assert xml_safe("plain <&> \t\n\r é 🙂 \ud7ff\ue000") == "plain <&> \t\n\r é 🙂 \ud7ff\ue000"
    assert xml_safe("\x00\x1f\ud800\ufffe\uffff") == "\\x00\\x1f\\ud800\\ufffe\\uffff"


def test_model_names_on_a_model_axis_survive_and_one_sided_arms_are_skipped(tmp_path):
    models = ["gpt-4.1-mini", "gpt-5-mini"]
    runs = [
        ("react", f"t{i}", 0, True, {"model": m, "run_id": f"{m}{i}"})
        for m in models
        for i in range(6)
    ]
    gone = [("cot", f"t{i}", 0, True, {"model": models[0], "run_id": f"c{i}"}) for i in range(6)]
    before = runs_folder(tmp_path / "b", runs + gone)
    after = runs_folder(tmp_path / "a", runs)
    result, _ = junit(before, after)
    assert result.exit_code == 0, result.stderr
    root = parsed(result.stdout_bytes)
    found = cases(root)
    for model in models:
        assert outcome(found[f"accuracy of {model} · react"]) == "passed"
    one_sided = found[f"accuracy of {models[0]} · cot"].find("skipped")
    assert one_sided.get("message") == "only in the baseline: not compared"
    assert [s.get("name") for s in root] == [f"{m} · react" for m in models] + [
        f"{models[0]} · cot"
    ]


def test_bad_input_writes_no_xml_and_exits_2(tmp_path):
    before = write(tmp_path / "b", {"react": 0.6}, seed=3)
    result, _ = junit(before, tmp_path / "missing")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error: ")


VALID_CASE = '<testcase name="accuracy of a" classname="loopbench.compare" time="0">{}</testcase>'


def document(case: str, tests: str = "1", failures: str = "0") -> str:
    return (
        f'<testsuites name="n" tests="{tests}" failures="{failures}" errors="0" time="0">'
        f'<testsuite name="a" tests="{tests}" failures="{failures}" errors="0" skipped="0" '
        f'time="0">{case}</testsuite></testsuites>'
    )


@pytest.mark.parametrize(
    "bad",
    [
        document(VALID_CASE.format('<failure message="m"/><skipped message="m"/>')),
        document(VALID_CASE.format("<failure/>")),
        document(VALID_CASE.format("<error message='m'/>")),
        document(VALID_CASE.replace(' classname="loopbench.compare"', "").format("")),
        document(VALID_CASE.replace('time="0"', 'time="1e3"').format("")),
        document(VALID_CASE.format(""), tests="one"),
        document(VALID_CASE.format("")).replace('name="n" ', 'name="n" skipped="0" '),
        "<testsuite/>",
    ],
    ids=[
        "two outcomes",
        "a failure without a message",
        "an error element",
        "no class name",
        "a time not a decimal",
        "a count not a number",
        "skipped on testsuites (junit-10 has none)",
        "no testsuites root",
    ],
)
def test_the_schema_refuses_what_a_reader_would_misread(bad):
    """The schema the tests validate against is strict: it accepts the valid document
    below and refuses each of these."""
    SCHEMA.validate(document(VALID_CASE.format('<failure message="m" type="t">text</failure>')))
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        SCHEMA.validate(bad)
