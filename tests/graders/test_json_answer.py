import pytest

from tests.graders.answers import canonical, from_target, graded, refused

CITY = {"fields": {"city": "Rotterdam", "trucks": 79}}
SCHEMA = {
    "type": "object",
    "required": ["city"],
    "properties": {"trucks": {"type": "integer", "minimum": 0}},
}


@pytest.mark.parametrize(
    "answer",
    [
        '{"city": "Rotterdam", "trucks": 79}',
        '```json\n{"trucks": 79.0, "city": "Rotterdam"}\n```',
        'The depot: {"city": "Rotterdam", "trucks": 79, "note": "busiest"}.',
        'Answer: {"city": "Rotterdam", "trucks": 79}',
        'Answer:\n{\n  "city": "Rotterdam",\n  "trucks": 79\n}',
    ],
)
def test_an_object_with_the_expected_fields_is_right(answer):
    assert graded("json", CITY, answer)["correct"] is True


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ('{"city": "Gdansk", "trucks": 79}', "a field differs"),
        ('{"city": "Rotterdam or Gdansk", "trucks": 79}', "a hedge in a field"),
        ('{"city": ["Rotterdam", "Gdansk"], "trucks": 79}', "every option in a field"),
        ('{"city": "Rotterdam"}', "a field missing"),
        ('{"city": "Rotterdam", "trucks": "79"}', "a string is not a number"),
        ("city: Rotterdam, trucks: 79", "not JSON"),
        ("[1, 2]", "not an object"),
    ],
)
def test_a_differing_missing_or_unreadable_object_is_wrong(answer, why):
    assert graded("json", CITY, answer)["correct"] is False, why


def test_equality_is_deep_and_booleans_are_not_numbers():
    nested = {"fields": {"stops": [{"id": 1}, {"id": 2}]}}
    assert graded("json", nested, '{"stops": [{"id": 1.0}, {"id": 2}]}')["correct"]
    assert not graded("json", nested, '{"stops": [{"id": 2}, {"id": 1}]}')["correct"]
    assert not graded("json", {"fields": {"ok": True}}, '{"ok": 1}')["correct"]


def test_the_schema_is_checked():
    assert graded("json", {"schema": SCHEMA}, '{"city": "Leeds", "trucks": 3}')["correct"]
    wrong = graded("json", {"schema": SCHEMA}, '{"city": "Leeds", "trucks": -3}')
    assert not wrong["correct"] and "trucks" in wrong["reason"]


@pytest.mark.parametrize(
    ("expected", "says"),
    [({}, "expects nothing"), ({"schema": {"type": "thing"}}, "not a JSON Schema")],
)
def test_a_key_that_would_grade_wrongly_is_refused(expected, says):
    assert says in refused("json", expected)


def test_the_canonical_answer_is_the_object_with_keys_sorted():
    said = canonical("json", CITY, 'It is {"trucks": 79, "city": "Rotterdam"}')
    assert said == '{"city": "Rotterdam", "trucks": 79}'


def test_a_data_files_json_text_makes_the_fields():
    assert from_target("json", '{"city": "Leeds"}').fields == {"city": "Leeds"}


@pytest.mark.parametrize(
    "answer",
    [
        'The format is {"city": "..."}. My answer: {"city": "Rotterdam", "trucks": 79}',
        '```json\n{"city": "Gdansk", "trucks": 79}\n```\nNo:\n```json\n'
        '{"city": "Rotterdam", "trucks": 79}\n```',
        '{"city": "Rotterdam", "trucks": 79, "near": {"city": "Gdansk"}}',
    ],
)
def test_the_last_object_is_the_answer(answer):
    assert graded("json", CITY, answer)["correct"] is True


def test_two_different_objects_joined_by_or_are_a_hedge():
    hedge = '{"city": "Rotterdam", "trucks": 79} or {"city": "Gdansk", "trucks": 79}'
    result = graded("json", CITY, hedge)
    assert result["correct"] is False and "hedged" in result["reason"]
    assert canonical("json", CITY, hedge) == ""
