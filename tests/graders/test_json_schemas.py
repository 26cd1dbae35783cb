"""JSON Schemas of the json grader and promptfoo's is-json (loopbench/graders/json_schemas.py): refs
resolved only inside the schema, loops and bad schemas refused when the set loads, and
checking one bounded in time and depth, with nothing fetched."""

import json
import time

import pytest
from click.testing import CliRunner

from loopbench.graders import answer_time as answer_time_module
from loopbench.graders import json_schemas, user_regex
from loopbench.graders.answer_time import GradedWrong, TooSlow, answer_time
from loopbench.harness.cli.main import main
from tests.fakes.counting_listener import CountingListener
from tests.graders.answers import graded, graded_apart, refused


@pytest.fixture
def listener():
    counting = CountingListener(hold=False)
    yield counting
    counting.close()


def remote_schemas(url: str) -> list[dict]:
    return [
        {"$ref": f"{url}/schema.json"},
        {"properties": {"city": {"$ref": f"{url}/city.json#/defs/name"}}},
        {"$id": f"{url}/root.json", "$ref": "other.json"},
        {"$schema": f"{url}/meta", "type": "object"},
        {"$defs": {"a": {"$ref": f"{url}/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
    ]


def test_no_schema_reaches_the_network_when_the_set_loads(listener):
    for schema in remote_schemas(listener.url):
        assert "nothing is fetched" in refused("json", {"schema": schema})
        assert "nothing is fetched" in refused("asserts", [{"type": "is-json", "value": schema}])
    assert listener.accepted == 0


def test_no_schema_reaches_the_network_when_an_answer_is_checked(listener):
    # Past the load-time check (a task built by hand): the registry still fetches nothing.
    for schema in remote_schemas(listener.url)[:3]:
        with pytest.raises(GradedWrong, match="does not resolve"), answer_time():
            json_schemas.problem(schema, {"city": "Leeds"})
    assert listener.accepted == 0


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"$ref": "file:///etc/passwd"}, "'file:///etc/passwd' does not resolve inside"),
        ({"$ref": "other.json"}, "'other.json' does not resolve inside"),
        ({"$ref": "#/$defs/missing"}, "'#/$defs/missing' does not resolve inside"),
        ({"$ref": "#nowhere"}, "does not resolve inside"),
        ({"$ref": "#/required", "required": ["a"]}, "points at what is not a schema"),
        ({"type": "thing"}, "not a JSON Schema"),
        ({"pattern": "("}, "not a JSON Schema"),
        ({"pattern": "[[:alpha:]]+"}, "pattern '[[:alpha:]]+' is not a regular expression"),
        ({"patternProperties": {"[a--b]": {}}}, "'[a--b]' is not a"),
        ({"$schema": "https://example.com/my-draft", "type": "object"}, "not a JSON Schema draft"),
        (
            {"patternProperties": {"^a": {}}, "unevaluatedProperties": False},
            "unevaluatedProperties with patternProperties",
        ),
    ],
)
def test_a_ref_outside_the_schema_or_a_bad_schema_is_refused(schema, says):
    assert says in refused("json", {"schema": schema})


@pytest.mark.parametrize(
    ("schema", "loop"),
    [
        ({"$ref": "#"}, "$ref '#'"),
        (
            {
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                "properties": {"x": {"$ref": "#/$defs/a"}},
            },
            "$ref '#/$defs/a' -> $ref '#/$defs/b'",
        ),
        ({"type": "object", "allOf": [{"$ref": "#"}]}, "$ref '#' -> allOf"),
        ({"anyOf": [{"type": "string"}, {"not": {"$ref": "#"}}]}, "$ref '#' -> anyOf -> not"),
        ({"if": {"type": "object"}, "then": {"$ref": "#"}}, "$ref '#' -> then"),
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {"a": {"$ref": "#/definitions/a"}},
            },
            "$ref '#/definitions/a'",
        ),
        ({"$dynamicAnchor": "m", "oneOf": [{"$dynamicRef": "#m"}]}, "$dynamicRef '#m' -> oneOf"),
    ],
)
def test_refs_that_loop_without_reading_into_the_answer_are_refused(schema, loop):
    said = refused("json", {"schema": schema})
    assert "refs loop without reading into the answer" in said and loop in said


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"child": {"$ref": "#"}}},
        {
            "$defs": {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}},
            "$ref": "#/$defs/list",
        },
        {
            "$defs": {"a": {"$anchor": "name", "type": "string"}},
            "properties": {"n": {"$ref": "#name"}},
        },
        {
            "$id": "https://example.com/root",
            "$defs": {"city": {"$id": "https://example.com/city", "type": "string"}},
            "properties": {"city": {"$ref": "city"}},
        },
        {"$ref": "https://json-schema.org/draft/2020-12/schema"},  # a draft's own, shipped
    ],
)
def test_refs_inside_the_schema_and_recursion_into_the_answer_are_read(schema):
    result = graded("json", {"schema": schema}, 'Answer: {"city": "Leeds"}')
    assert set(result) >= {"correct", "reason"}


def test_a_recursive_schema_checks_a_nested_answer():
    tree = {"type": "object", "properties": {"child": {"$ref": "#"}, "n": {"type": "integer"}}}
    right = graded("json", {"schema": tree}, '{"child": {"child": {"n": 3}}}')
    wrong = graded("json", {"schema": tree}, '{"child": {"child": {"n": "3"}}}')
    assert right["correct"] and not wrong["correct"]
    assert "child/child/n" in wrong["reason"]


def test_an_answer_nested_deeper_than_the_check_can_follow_is_wrong_saying_so():
    tree = {"type": "object", "properties": {"child": {"$ref": "#"}}}
    deep = '{"child": ' * 900 + "{}" + "}" * 900
    result = graded("json", {"schema": tree}, deep)
    assert result["correct"] is False
    assert "nested deeper than the check can follow" in result["reason"]
    nested: dict = {}
    for _ in range(3000):  # deeper than a reply's JSON parses; met before Python's limit
        nested = {"child": nested}
    with pytest.raises(GradedWrong, match="nested deeper than the check can follow"):
        json_schemas.problem(tree, nested)


def test_a_schema_pattern_that_takes_too_long_grades_wrong_saying_so():
    schema = {"properties": {"code": {"type": "string", "pattern": "(x+x+)+y"}}}
    result, seconds = graded_apart("json", {"schema": schema}, json.dumps({"code": "x" * 5000}))
    assert result["correct"] is False and "took longer than 0.5 s" in result["reason"]
    assert "pattern_error" not in result["reason"] and seconds < 60


@pytest.mark.parametrize(
    "schema",
    [
        {"patternProperties": {"(x+x+)+y": {"type": "string"}}},
        {"additionalProperties": False, "patternProperties": {"(x+x+)+y": {}}},  # first
        {"propertyNames": {"pattern": "(x+x+)+y"}},
    ],
    ids=["patternProperties", "additionalProperties", "propertyNames"],
)
def test_property_name_patterns_are_matched_under_the_limit(schema):
    result, _ = graded_apart("json", {"schema": schema}, json.dumps({"x" * 5000: 1}))
    assert result["correct"] is False and "took longer than 0.5 s" in result["reason"]


@pytest.mark.parametrize(
    ("schema", "answer", "correct"),
    [
        ({"patternProperties": {"^n_": {"type": "integer"}}}, '{"n_a": 1}', True),
        ({"patternProperties": {"^n_": {"type": "integer"}}}, '{"n_a": "1"}', False),
        ({"patternProperties": {"^n_": {}}, "additionalProperties": False}, '{"n_a": 1}', True),
        ({"patternProperties": {"^n_": {}}, "additionalProperties": False}, '{"m": 1}', False),
        ({"properties": {"d": {"pattern": r"^\d{4}$"}}}, '{"d": "2024"}', True),
        ({"properties": {"d": {"pattern": r"^\d{4}$"}}}, '{"d": "24"}', False),
        ({"properties": {"d": {"pattern": r"(?<=x)y"}}}, '{"d": "xy"}', True),
    ],
)
def test_patterns_mean_what_they_meant(schema, answer, correct):
    assert graded("json", {"schema": schema}, answer)["correct"] is correct


def test_a_bad_schema_in_a_task_file_is_one_line_naming_file_row_and_field(tmp_path):
    rows = [
        {"id": "a", "question": "q?", "expected": {"schema": {"type": "object"}}},
        {"id": "b", "question": "q?", "expected": {"schema": {"$ref": "#"}}},
    ]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "taskset.toml").write_text('name = "s"\ngrader = "json"\n')
    result = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(tmp_path)])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and "tasks.jsonl:2" in line and "'expected'" in line
    assert "refs loop" in line


def test_a_schema_check_past_the_answers_time_is_too_slow(monkeypatch):
    monkeypatch.setattr(answer_time_module, "LIMIT_S", 0.05)
    with answer_time():
        time.sleep(0.1)
        with pytest.raises(TooSlow, match=r"checking the schema took longer than 0\.05 s"):
            json_schemas.problem({"type": "object"}, {})


def test_a_check_that_fails_on_an_answer_is_wrong_saying_so(monkeypatch):
    def fails(pattern, text, ignore_case=False):
        raise ValueError("no")

    monkeypatch.setattr(user_regex, "search", fails)
    with answer_time(), pytest.raises(GradedWrong, match=r"could not be checked .*ValueError"):
        json_schemas.problem({"properties": {"a": {"pattern": "b"}}}, {"a": "b"})


def test_a_draft_3_extends_holding_a_ref_outside_the_schema_is_refused():
    schema = {"$schema": "http://json-schema.org/draft-03/schema#", "extends": {"$ref": "o.json"}}
    assert "refs cannot be read" in refused("asserts", [{"type": "is-json", "value": schema}])


UNIQUE = {"schema": {"properties": {"x": {"uniqueItems": True}}}}


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        (["a", *range(3000)], True),
        (["a", *range(3000), 3.0], False),  # 3.0 is 3
        ([True, 1, False, 0, None, "1"], True),  # booleans are not numbers
        ([{"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}], False),
        ([{"a": 1}, {"a": True}, [1, 2], [2, 1]], True),
    ],
)
def test_unique_items_are_read_in_linear_time_as_jsonschema_compares(items, unique, monkeypatch):
    def pairwise(_items):  # jsonschema's own compares every pair it cannot sort: seconds
        raise AssertionError("the quadratic uniq was used")

    monkeypatch.setattr("jsonschema._keywords.uniq", pairwise)
    assert graded("json", UNIQUE, json.dumps({"x": items}))["correct"] is unique
