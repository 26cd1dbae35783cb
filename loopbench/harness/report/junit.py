"""``compare --format junit``: the verdict as JUnit XML, the test report CI systems render.

The shape is the one GitHub's, GitLab's, Jenkins' and Buildkite's readers share (Jenkins'
and Ant's ``junit-10`` schema): ``testsuites`` > one ``testsuite`` per arm > one
``testcase`` per criterion, accuracy and cost per correct answer. A criterion that
regressed is a ``failure`` whose message holds the figures and the tasks that flipped;
one that cannot be judged (cost without prices, or calls that reported no usage) is
``skipped``. Arms on one side only are skipped too, and said so.

The arm stays whole in the test's name (a model axis's ``model · arm`` included): a
class name is split at its dots by Jenkins, so every case has the one class
``loopbench.compare``. Nothing a model wrote goes in: arm names, task ids and figures
only. They are data, of any characters: ElementTree escapes markup, and the characters
XML 1.0 cannot hold at all (control characters, lone surrogates) are written as
``\\x1b``-style escapes rather than making the file unreadable.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from loopbench.harness.report.compare import ArmComparison, Comparison
from loopbench.harness.report.compare_text import PROMPTS_DIFFER, flipped, left_out_line
from loopbench.harness.report.deciding_digits import dollars, money
from loopbench.harness.report.verdict import Criterion

SUITES_NAME = "loopbench compare"
CLASSNAME = "loopbench.compare"
LABELS = {"accuracy": "accuracy", "cost": "cost per correct"}

# What XML 1.0 allows (its Char production); anything else is escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot carry written as a Python escape."""
    # guard: ci-characters-xml-cannot-hold
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def as_junit(comparison: Comparison) -> bytes:
    """The comparison as a UTF-8 JUnit XML document."""
    root = ET.Element("testsuites", name=SUITES_NAME)
    for arm in comparison.arms:
        suite = _suite(root, arm.arm)
        for criterion in arm.criteria:
            _case(suite, arm.arm, criterion.name, _lines(arm, criterion), criterion)
    for side, arms in (("baseline", comparison.only_before), ("candidate", comparison.only_after)):
        for name in arms:
            suite = _suite(root, name)
            for label in LABELS:
                _case(suite, name, label, [f"only in the {side}: not compared"], None)
    for suite in root:
        _count(suite, suite.findall("testcase"))
        suite.set("skipped", str(len(suite.findall("testcase/skipped"))))
    _count(root, root.findall("testsuite/testcase"))
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _suite(root: ET.Element, arm: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=xml_safe(arm))


def _case(
    suite: ET.Element, arm: str, criterion: str, lines: list[str], verdict: Criterion | None
) -> None:
    name = xml_safe(f"{LABELS[criterion]} of {arm}")
    case = ET.SubElement(suite, "testcase", name=name, classname=CLASSNAME, time="0")
    message, text = xml_safe("; ".join(lines)), xml_safe("\n".join(lines))
    # guard: ci-regressed-criterion-failed-test
    if verdict is not None and verdict.regressed:
        ET.SubElement(case, "failure", message=message, type="regression").text = text
    # guard: ci-cost-cannot-judged-skipped
    elif verdict is None or not verdict.judged:
        ET.SubElement(case, "skipped", message=message)
    else:
        ET.SubElement(case, "system-out").text = text


def _count(element: ET.Element, cases: list[ET.Element]) -> None:
    element.set("tests", str(len(cases)))
    # guard: ci-junit-counts-cases
    element.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    element.set("errors", "0")
    element.set("time", "0")


def _corrected_lines(arm: ArmComparison) -> list[str]:
    """The difference corrected for the judges' error, and which difference the gate used."""
    if arm.judge is None:
        return []
    c = arm.judge.corrected
    lines = [f"accuracy gate: {arm.judge.why}"]
    if c is not None and not math.isnan(c.estimate):
        lines.insert(
            0,
            f"corrected difference {c.estimate * 100:+.1f} points [{arm.judge.level:.0%} CI "
            f"{c.low * 100:+.1f}, {c.high * 100:+.1f}]",
        )
    return lines


def _lines(arm: ArmComparison, criterion: Criterion) -> list[str]:
    """The verdict, then the figures it rests on."""
    p = arm.paired
    pairs = f"{p.n_pairs} pairs on {p.tasks} tasks"
    # guard: compare-junit-says-prompts-differ
    prompts = [f"{PROMPTS_DIFFER}: {arm.prompts_change}"] if arm.prompts_change else []
    if criterion.name == "accuracy":
        return [
            criterion.why,
            f"accuracy {p.accuracy_before:.1%} → {p.accuracy_after:.1%}",
            f"difference {p.difference * 100:+.1f} points [95% CI {p.ci_low * 100:+.1f}, "
            f"{p.ci_high * 100:+.1f}]",
            f"paired p = {p.p_value:.3g}",
            *_corrected_lines(arm),
            pairs,
            *prompts,
            *([left_out_line(arm.arm, arm.left_out)] if arm.left_out else []),
            f"right → wrong: {flipped(p.right_to_wrong)}",
            f"wrong → right: {flipped(p.wrong_to_right)}",
        ]
    before, after = p.cost_per_correct_before, p.cost_per_correct_after
    decimals = money([before, after], least=6)  # the digits that tell the two apart

    def shown(value: float, sign: bool = False) -> str:
        return "unknown" if math.isnan(value) else dollars(value, decimals, sign)

    return [
        criterion.why,
        f"cost per correct {shown(before)} → {shown(after)}",
        f"difference {shown(after - before, sign=True)} [95% CI "
        f"{shown(p.cost_ci_low, sign=True)}, {shown(p.cost_ci_high, sign=True)}]",
        pairs,
        *prompts,
    ]


__all__ = ["as_junit", "xml_safe"]
