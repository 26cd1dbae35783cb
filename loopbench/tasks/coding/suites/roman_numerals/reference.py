NUMERALS = (
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)


def parse_roman(text: str) -> int:
    total = 0
    position = 0
    for value, symbol in NUMERALS:
        repeats = 3 if len(symbol) == 1 and symbol in "MCXI" else 1
        for _ in range(repeats):
            if text.startswith(symbol, position):
                total += value
                position += len(symbol)
    if total == 0 or position != len(text) or _to_roman(total) != text:
        raise ValueError(f"not a Roman numeral in standard form: {text!r}")
    return total


def _to_roman(number: int) -> str:
    parts: list[str] = []
    for value, symbol in NUMERALS:
        count, number = divmod(number, value)
        parts.append(symbol * count)
    return "".join(parts)
