UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = ((10**9, "billion"), (10**6, "million"), (10**3, "thousand"))


def number_to_words(n: int) -> str:
    if not 0 <= n <= 999_999_999_999:
        raise ValueError(f"{n} is outside 0 to 999,999,999,999")
    if n == 0:
        return "zero"
    words: list[str] = []
    for scale, name in SCALES:
        if n >= scale:
            words += [_below_thousand(n // scale), name]
            n %= scale
    if n:
        if words and n < 100:
            words.append("and")
        words.append(_below_thousand(n))
    return " ".join(words)


def _below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    parts = [f"{UNITS[hundreds]} hundred"] if hundreds else []
    if rest:
        if hundreds:
            parts.append("and")
        parts.append(_below_hundred(rest))
    return " ".join(parts)


def _below_hundred(n: int) -> str:
    if n < 20:
        return UNITS[n]
    tens, units = divmod(n, 10)
    return TENS[tens] if units == 0 else f"{TENS[tens]}-{UNITS[units]}"
