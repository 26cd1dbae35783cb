"""promptfoo tests and the reply a scripted endpoint gives each, with promptfoo 0.123.1's
verdict on it (checked against promptfoo itself by test_promptfoo_oracle.py, where Node 22
and promptfoo are installed): the hostile corners where reading the final answer, Python's
regexes or Python's JSON would grade otherwise."""

import json
import re

from loopbench.harness.fakes.fake_server import Reply


def A(kind: str, value: object = None, **more: object) -> dict:
    """An assert of ``kind``, with ``value`` when given."""
    return {"type": kind, **({} if value is None else {"value": value}), **more}


#: (description, the reply, the asserts, promptfoo's verdict)
CASES = [
    ("equals exact", "Paris", [A("equals", "Paris")], True),
    ("equals padded reply", "  Paris\n", [A("equals", "Paris")], False),
    ("equals a number", "42", [A("equals", 42)], True),
    ("equals a whole float", "3", [A("equals", 3.0)], True),
    ("equals JSON with spaces", ' {"a": 1} ', [A("equals", {"a": 1})], True),
    ("equals JSON true is not 1", "[1]", [A("equals", [True])], False),
    ("equals multi-line", "Line one\nLine two", [A("equals", "Line one\nLine two")], True),
    (
        "not-equals final answer only",
        "I think so.\nAnswer: Paris",
        [A("not-equals", "Paris")],
        True,
    ),
    (
        "contains in the reasoning",
        "Paris is lovely, but\nAnswer: Lyon",
        [A("contains", "Paris")],
        True,
    ),
    (
        "not-contains in the reasoning",
        "Paris is lovely, but\nAnswer: Lyon",
        [A("not-contains", "Paris")],
        False,
    ),
    ("icontains any case", "PARIS", [A("icontains", "paris")], True),
    (
        "not-icontains in the reasoning",
        "Not lyon.\nAnswer: Paris",
        [A("not-icontains", "Lyon")],
        False,
    ),
    ("contains a number", "It was 1889.", [A("contains", 1889)], True),
    ("contains-any comma text", "Lyon", [A("contains-any", "Paris, Lyon")], True),
    ("contains-all a list", "Paris and Lyon", [A("contains-all", ["Paris", "Nice"])], False),
    (
        "icontains-any quoted commas",
        "NICE, FRANCE",
        [A("icontains-any", '"nice, france", paris')],
        True,
    ),
    ("icontains-all a list", "paris LYON", [A("icontains-all", ["Paris", "lyon"])], True),
    ("starts-with after a space", " Paris", [A("starts-with", "Paris")], False),
    ("starts-with", "Paris, France", [A("starts-with", "Paris")], True),
    ("not-starts-with", "Answer: Paris", [A("not-starts-with", "Paris")], True),
    ("regex dollar before a newline", "Paris\n", [A("regex", "^Paris$")], False),
    ("regex caret is the start only", "Reasoning\nParis", [A("regex", "^Paris")], False),
    ("regex named groups", "2024-03-01", [A("regex", "(?<y>\\d{4})-(?<m>\\d\\d)-\\d\\d")], True),
    ("regex named backreference", "03-03", [A("regex", "^(?<m>\\d\\d)-\\k<m>$")], True),
    ("regex backreference", "hello hello", [A("regex", "(\\w+) \\1")], True),
    ("regex optional group referenced", "b", [A("regex", "^(a)?b\\1$")], True),
    ("regex dot and carriage return", "a\rb", [A("regex", "a.b")], False),
    ("regex digit is ASCII", "٣", [A("regex", "\\d")], False),
    ("regex word is ASCII", "é", [A("regex", "\\w")], False),
    ("regex space takes nbsp", "a\xa0b", [A("regex", "a\\sb")], True),
    ("regex is case-sensitive", "PARIS", [A("regex", "paris")], False),
    ("not-regex", "Paris", [A("not-regex", "Lyon")], True),
    ("regex emoji is two units", "😀", [A("regex", "^.$")], False),
    ("regex brace is a character", "a{,3}", [A("regex", "a{,3}")], True),
    ("regex class with a range and dash", "-", [A("regex", "^[\\d-z]$")], True),
    ("is-json with whitespace", '\n {"a": [1, 2]} \n', [A("is-json")], True),
    ("is-json NaN", "NaN", [A("is-json")], False),
    ("is-json fenced", '```json\n{"a": 1}\n```', [A("is-json")], False),
    ("not-is-json", "Paris", [A("not-is-json")], True),
    (
        "is-json schema",
        '{"city": "Paris"}',
        [A("is-json", {"type": "object", "required": ["city"]})],
        True,
    ),
    (
        "is-json schema unmet",
        '{"town": "Paris"}',
        [A("is-json", {"type": "object", "required": ["city"]})],
        False,
    ),
    ("weight zero always holds", "Lyon", [A("contains", "Paris", weight=0)], True),
    ("template value", "Paris", [A("equals", "{{ city }}")], True),
    (
        "several asserts",
        "Paris\nAnswer: Paris",
        [A("contains", "Paris"), A("not-contains", "Lyon"), A("regex", "Answer: \\w+")],
        True,
    ),
]


def key(description: str) -> str:
    """The mark in a test's question by which the scripted endpoint knows it."""
    return f"[{re.sub(r'[^a-z0-9]+', '-', description.lower())}]"


def written_tests() -> str:
    """The cases as promptfoo's tests file (JSON is YAML)."""
    tests = [
        {
            "description": description,
            "vars": {"question": f"{key(description)} What is the answer?", "city": "Paris"},
            "assert": asserts,
        }
        for description, _, asserts, _ in CASES
    ]
    return json.dumps(tests, ensure_ascii=False, indent=1)


def responder(body: dict) -> Reply:
    """The case's reply, found by the mark in the last user message."""
    question = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return next(Reply(reply) for d, reply, _, _ in CASES if key(d) in question)


EXPECTED = {description: verdict for description, _, _, verdict in CASES}
