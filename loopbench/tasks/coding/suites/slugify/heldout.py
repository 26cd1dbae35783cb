from loopbench_suite import rules


@rules("separators")
def test_punctuation_runs(candidate):
    assert candidate("What is this? A test.") == "what-is-this-a-test"
    assert candidate("a_b.c/d") == "a-b-c-d"


@rules("accents")
def test_accented_letters(candidate):
    assert candidate("Café au Lait") == "cafe-au-lait"
    assert candidate("Señor Niño") == "senor-nino"
    assert candidate("Über") == "uber"


@rules("compatibility")
def test_compatibility_characters(candidate):
    assert candidate("ﬁnal ﬂight") == "final-flight"


@rules("apostrophes")
def test_apostrophes(candidate):
    assert candidate("Rock 'n' Roll") == "rock-n-roll"
    assert candidate("O\u2019Brien\u2019s Pub") == "obriens-pub"
    assert candidate("rock'n'roll") == "rocknroll"


@rules("other-separates", "may-be-empty")
def test_remaining_non_ascii_separates(candidate):
    assert candidate("Tokyo 東京 Tower") == "tokyo-tower"
    assert candidate("a—b") == "a-b"
    assert candidate("日本") == ""


@rules("digits-kept", "lower-case")
def test_digits_and_case(candidate):
    assert candidate("Version 2.0 Released") == "version-2-0-released"
    assert candidate("1984") == "1984"
    assert candidate("MiXeD CaSe") == "mixed-case"


@rules("trim", "may-be-empty")
def test_trimming(candidate):
    assert candidate("  ...Leading and trailing...  ") == "leading-and-trailing"
    assert candidate("-") == ""
    assert candidate("   ") == ""
