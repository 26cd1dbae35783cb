from pathlib import Path

import pytest

from harness.experiment import ArmError, load_experiment, parse_arm, parse_arms
from harness.patterns import UnknownPattern, registered


def test_canonical_spec_sorts_options_and_fills_defaults():
    arm = parse_arm("react_text:tool=improved, guard=on")
    assert arm.spec == (
        "react_text:guard=on,max_steps=8,max_tokens=20000,step_timeout_s=0,tool=improved"
    )
    assert parse_arm("react_text").spec == parse_arm("react_text:guard=off").spec


def test_pattern_without_options_is_its_name():
    assert parse_arm("direct").spec == "direct"


def test_unknown_pattern_lists_what_is_registered():
    with pytest.raises(UnknownPattern) as info:
        parse_arm("rewoo2")
    message = str(info.value)
    assert "no pattern named 'rewoo2'" in message
    assert all(name in message for name in registered())


def test_empty_name_is_refused_by_naming_the_field():
    with pytest.raises(UnknownPattern, match="names no pattern"):
        parse_arm(":guard=on")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("react_text:gaurd=on", "has no option 'gaurd'; its options: guard, max_steps"),
        ("react_text:guard=maybe", "guard='maybe'"),
        ("react_text:max_steps=-1", "max_steps='-1'"),
        ("react_text:guard", "'guard' is not key=value"),
        ("react_text:guard=on,guard=off", "given twice"),
        ("direct:guard=on", "direct has no option 'guard'; its options: none"),
    ],
)
def test_bad_options_say_what_is_wrong(text, message):
    with pytest.raises(ArmError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_arm(text)


def test_duplicate_arms_are_refused():
    with pytest.raises(ArmError, match="same configuration"):
        parse_arms(["react_text", "react_text:guard=off"])


def test_a_grid_spec_expands_to_every_combination():
    arms = parse_arms(["react_text:guard=on|off,tool=plain|improved", "reflection:cycles=0|1|2"])
    labels = [a.spec for a in arms]
    assert len(labels) == 7
    assert (
        "react_text:guard=off,max_steps=8,max_tokens=20000,step_timeout_s=0,tool=improved" in labels
    )
    assert sum(a.pattern == "reflection" for a in arms) == 3


def test_pattern_alternatives_expand_too():
    assert [a.pattern for a in parse_arms(["direct|cot"])] == ["direct", "cot"]


def test_the_shipped_full_grid_covers_every_pattern_and_axis():
    written = load_experiment(Path(__file__).parents[2] / "experiments" / "full-grid.toml")
    arms = parse_arms(written.arms)
    assert {a.pattern for a in arms} == set(registered())
    assert len(arms) == 4 + 8 * 4 + 3 * 4


def test_a_bad_experiment_file_names_the_file_and_field(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('arms = ["direct"]\nrepeats = 0\n')
    with pytest.raises(ArmError, match=r"x.toml: field 'repeats'"):
        load_experiment(path)
