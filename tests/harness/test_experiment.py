import itertools
from pathlib import Path

import pytest

from loopbench.harness.arms import ArmError, arm_identity, parse_arm, parse_arms
from loopbench.harness.config import ConfigError, load_experiment
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.patterns.registry import UnknownPattern


def test_spec_is_the_options_set_sorted_and_canonical():
    assert parse_arm("react_text:tool=improved, guard=true").spec == (
        "react_text:guard=on,tool=improved"
    )
    assert parse_arm("react_text").spec == "react_text"
    assert parse_arm("react_text:guard=off").spec == "react_text:guard=off"
    assert parse_arm("react:step_timeout_s=0.50,max_steps=9").spec == (
        "react:max_steps=9,step_timeout_s=0.5"
    )


def test_resolved_holds_every_option_with_its_default():
    resolved = parse_arm("react_text:guard=on").resolved
    assert resolved == {
        "max_steps": 8,
        "max_tokens": 20000,
        "step_timeout_s": 0,
        "max_output_tokens": None,
        "guard": True,
        "tool": "plain",
        "history": "full",
    }
    assert parse_arm("plan_execute").resolved["max_steps"] == 16


def test_arm_identity_canonicalises_and_leaves_the_unparsable_alone():
    assert arm_identity("react_text:tool=improved,guard=true") == (
        "react_text:guard=on,tool=improved"
    )
    assert arm_identity(" reflection:cycles=2 ") == "reflection:cycles=2"
    assert arm_identity("nosuch:x=1") == "nosuch:x=1"
    assert arm_identity("react_text:gaurd=on") == "react_text:gaurd=on"


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
        (
            "react_text:gaurd=on",
            "has no option 'gaurd'; its options: guard, history, max_output_tokens, "
            "max_steps, max_tokens, reasoning_effort, step_timeout_s, thinking_budget, tool",
        ),
        ("react_text:guard=maybe", "guard='maybe'"),
        ("react_text:max_steps=-1", "max_steps='-1'"),
        ("react_text:guard", "'guard' is not key=value"),
        ("react_text:guard=on,guard=off", "given twice"),
        (
            "direct:guard=on",
            "direct has no option 'guard'; its options: max_output_tokens, max_steps, "
            "max_tokens, reasoning_effort, step_timeout_s, thinking_budget",
        ),
    ],
)
def test_bad_options_say_what_is_wrong(text, message):
    with pytest.raises(ArmError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_arm(text)


@pytest.mark.parametrize(
    "texts",
    [
        ["react_text", "react_text:guard=off"],
        ["react_text", "react_text:max_steps=8"],
        ["react_text:guard=on,tool=plain", "react_text:tool=plain,guard=true"],
        ["react_text:guard=on|off", "react_text"],
    ],
)
def test_arms_running_the_same_configuration_are_refused(texts):
    with pytest.raises(ArmError, match="same configuration"):
        parse_arms(texts)


def test_arms_differing_in_any_option_are_all_kept():
    arms = parse_arms(["react_text", "react_text:max_steps=9", "react_text:max_output_tokens=64"])
    assert [a.spec for a in arms] == [
        "react_text",
        "react_text:max_steps=9",
        "react_text:max_output_tokens=64",
    ]


def test_a_grid_spec_expands_to_every_combination():
    arms = parse_arms(["react_text:guard=on|off,tool=plain|improved", "reflection:cycles=0|1|2"])
    labels = [a.spec for a in arms]
    assert len(labels) == 7
    assert "react_text:guard=off,tool=improved" in labels
    assert sum(a.pattern == "reflection" for a in arms) == 3


def test_pattern_alternatives_expand_too():
    assert [a.pattern for a in parse_arms(["direct|cot"])] == ["direct", "cot"]


#: The ablation axes of seed 003 the full grid crosses, where a pattern has the option.
GRID_AXES = {"guard": [True, False], "tool": ["plain", "improved"], "cycles": [0, 1, 2]}


def test_the_shipped_full_grid_covers_every_pattern_and_axis():
    """Every pattern, once for each combination of the axes its options have."""
    written = load_experiment(Path(__file__).parents[2] / "experiments" / "full-grid.toml")
    arms = parse_arms(written.arms)
    expected = []
    for name, info in registered().items():
        axes = [GRID_AXES[f] for f in GRID_AXES if f in info.options_model.model_fields]
        expected += [(name, values) for values in itertools.product(*axes)]
    grid = [(a.pattern, tuple(a.resolved[f] for f in GRID_AXES if f in a.resolved)) for a in arms]
    assert sorted(grid) == sorted(expected)


def test_a_bad_experiment_file_names_the_file_and_field(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('arms = ["direct"]\nrepeats = 0\n')
    with pytest.raises(ConfigError, match=r"x.toml: field 'repeats' on line 2"):
        load_experiment(path)


def test_an_identity_keeps_every_digit_and_refuses_values_that_are_not_finite():
    arms = parse_arms(["best_of_n:temperature=0.1234567", "best_of_n:temperature=0.1234568"])
    assert [a.spec for a in arms] == [
        "best_of_n:temperature=0.1234567",
        "best_of_n:temperature=0.1234568",
    ]
    assert parse_arm("react:step_timeout_s=5.0").spec == "react:step_timeout_s=5"
    for value in ("inf", "nan"):
        with pytest.raises(ArmError, match="finite"):
            parse_arm(f"best_of_n:temperature={value}")
