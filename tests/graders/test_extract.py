"""Code extraction on replies written the way models write them."""

import pytest

from loopbench.graders.extract import extract_code

SOLUTION = "def add(a, b):\n    return a + b\n"


def test_a_fenced_block_after_prose():
    reply = f"Here is the function you asked for:\n\n```python\n{SOLUTION}```"
    assert extract_code(reply, "add") == SOLUTION


def test_prose_after_the_block():
    reply = f"```python\n{SOLUTION}```\n\nThis adds the two numbers. The time complexity is O(1)."
    assert extract_code(reply, "add") == SOLUTION


def test_a_helper_block_then_the_main_block():
    reply = (
        "First a helper:\n\n```python\nimport math\n\ndef is_prime(n):\n"
        "    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))\n```\n\n"
        "Then the function:\n\n```python\ndef count_primes(xs):\n"
        "    return sum(1 for x in xs if is_prime(x))\n```\n"
    )
    code = extract_code(reply, "count_primes")
    assert code is not None
    assert code.index("def is_prime") < code.index("def count_primes")
    assert "import math" in code


def test_an_example_usage_block_after_the_solution_is_left_out():
    reply = (
        f"```python\n{SOLUTION}```\n\nExample usage:\n\n"
        "```python\nprint(add(2, 3))  # 5\nassert add(1, 1) == 2\n```\n"
    )
    assert extract_code(reply, "add") == SOLUTION


def test_an_earlier_block_with_usage_code_is_not_taken_as_a_helper():
    reply = (
        "```python\ndef helper(x):\n    return x\nprint(helper(3))\n```\n\n"
        "```python\ndef f(x):\n    return helper(x) * 2\n```\n"
    )
    assert extract_code(reply, "f") == "def f(x):\n    return helper(x) * 2\n"


def test_a_corrected_version_later_in_the_reply_wins():
    reply = (
        "```python\ndef add(a, b):\n    return a - b\n```\n\n"
        f"Wait, that subtracts. Corrected:\n\n```python\n{SOLUTION}```\n"
    )
    assert extract_code(reply, "add") == SOLUTION


def test_a_later_block_that_does_not_parse_does_not_replace_one_that_does():
    reply = f"```python\n{SOLUTION}```\n\nOr:\n\n```python\ndef add(a, b)\n    return a+b\n```"
    assert extract_code(reply, "add") == SOLUTION


def test_a_bare_function_between_two_sentences():
    reply = f"Sure! The function is:\n\n{SOLUTION}\nThis returns the sum of a and b."
    assert extract_code(reply, "add") == SOLUTION


def test_a_bare_answer_with_imports_and_a_decorator():
    reply = (
        "You can memoise it:\n\nfrom functools import cache\n\n@cache\ndef fib(n):\n"
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\nHope this helps!"
    )
    assert extract_code(reply, "fib") == (
        "from functools import cache\n\n@cache\ndef fib(n):\n"
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    )


def test_prose_starting_with_from_is_not_code():
    reply = f"from what you describe, this works:\n\n{SOLUTION}"
    assert extract_code(reply, "add") == SOLUTION


def test_an_untagged_fence():
    assert extract_code(f"```\n{SOLUTION}```", "add") == SOLUTION


@pytest.mark.parametrize("tag", ["py", "Python", "python3"])
def test_python_tags(tag):
    assert extract_code(f"```{tag}\n{SOLUTION}```", "add") == SOLUTION


def test_a_block_in_another_language_is_not_code():
    reply = f"Install nothing:\n\n```bash\npip install nothing\n```\n\n```python\n{SOLUTION}```"
    assert extract_code(reply, "add") == SOLUTION


def test_indentation_inside_the_function_is_kept_and_an_indented_fence_is_dedented():
    body = (
        "def classify(n):\n    if n < 0:\n        return 'negative'\n"
        "    for d in range(2, n):\n        if n % d == 0:\n            return 'composite'\n"
        "    return 'prime'\n"
    )
    indented = "".join("    " + line + "\n" for line in body.splitlines())
    reply = f"1. The function:\n\n    ```python\n{indented}    ```\n"
    assert extract_code(reply, "classify") == body


def test_a_reply_with_only_prose_has_no_code():
    reply = "I would sort the list and then return the middle element; from there it is easy."
    assert extract_code(reply, "median") is None


def test_code_that_does_not_parse_is_none():
    assert extract_code("```python\ndef add(a, b)\n    return a + b\n```", "add") is None
    assert extract_code("def add(a, b)\n    return a +\n", "add") is None


def test_windows_line_endings():
    reply = "Here:\r\n\r\n```python\r\ndef add(a, b):\r\n    return a + b\r\n```\r\nDone.\r\n"
    assert extract_code(reply, "add") == SOLUTION


def test_a_class_entry_point():
    cache = (
        "class LRUCache:\n    def __init__(self, capacity):\n        self.capacity = capacity\n"
        "        self.items = {}\n\n    def get(self, key):\n        return self.items.get(key)\n"
    )
    reply = f"```python\n{cache}```\n\nUsage:\n\n```python\nc = LRUCache(2)\nc.get(1)\n```\n"
    assert extract_code(reply, "LRUCache") == cache


def test_a_block_left_open_at_the_end_is_not_used():
    truncated = "Here you go:\n\n```python\ndef add(a, b):\n    return a +"
    assert extract_code(truncated, "add") is None
    cut_after_answer = f"```python\n{SOLUTION}```\n\nTests:\n\n```python\nassert add(1,"
    assert extract_code(cut_after_answer, "add") == SOLUTION


def test_the_main_guard_is_cut():
    reply = f'```python\n{SOLUTION}\n\nif __name__ == "__main__":\n    print(add(input(), 1))\n```'
    assert extract_code(reply, "add") == SOLUTION


def test_no_block_defines_the_entry_point_gives_the_last_that_parses():
    reply = "```python\ndef helper():\n    pass\n```\n\n```python\ndef other():\n    return 1\n```"
    assert extract_code(reply, "add") == "def other():\n    return 1\n"


def test_an_invalid_escape_in_a_string_raises_no_warning():
    # pytest turns warnings into errors: a SyntaxWarning from ast.parse would fail here.
    code = 'import re\n\ndef digits(s):\n    return re.findall("\\d", s)\n'
    assert extract_code(f"```python\n{code}```", "digits") == code


def test_a_file_of_code_keeps_what_comes_before_the_function():
    code = "NUMERALS = ((10, 'X'), (1, 'I'))\n\n\ndef parse_roman(text):\n    return NUMERALS\n"
    assert extract_code(code, "parse_roman") == code
