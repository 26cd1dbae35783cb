from loopbench_suite import rules


@rules("separators", "lower-case")
def test_spaces_and_punctuation_become_one_hyphen(candidate):
    assert candidate("Hello, World!") == "hello-world"
    assert candidate("  many   spaces  ") == "many-spaces"


@rules("accents")
def test_accents_are_removed(candidate):
    assert candidate("Crème Brûlée") == "creme-brulee"
    assert candidate("Ångström") == "angstrom"


@rules("compatibility")
def test_compatibility_forms_are_normalised(candidate):
    assert candidate("\uff26\uff55\uff4c\uff4c Width") == "full-width"


@rules("apostrophes")
def test_apostrophes_are_removed(candidate):
    assert candidate("Don't Panic") == "dont-panic"
    assert candidate("It\u2019s here") == "its-here"


@rules("other-separates", "digits-kept")
def test_other_characters_separate_words(candidate):
    assert candidate("red→blue") == "red-blue"
    assert candidate("Top 10 Tips") == "top-10-tips"


@rules("trim", "may-be-empty")
def test_edges_are_trimmed_and_the_result_may_be_empty(candidate):
    assert candidate("--Already-Slugged--") == "already-slugged"
    assert candidate("!!!") == ""
    assert candidate("") == ""
