import re

BOUNDS = {"minute": (0, 59), "hour": (0, 23), "day": (1, 31), "month": (1, 12), "weekday": (0, 7)}
ITEM = re.compile(r"(\*|[0-9]+|[0-9]+-[0-9]+)(?:/([0-9]+))?")


def cron_matches(field: str, value: int, kind: str) -> bool:
    if kind not in BOUNDS:
        raise ValueError(f"unknown kind {kind!r}")
    low, high = BOUNDS[kind]
    if not low <= value <= high:
        raise ValueError(f"value {value} is outside {low}-{high}")
    matched: set[int] = set()
    for item in field.split(","):
        matched |= _item_values(item, low, high)
    if kind == "weekday":
        matched = {0 if day == 7 else day for day in matched}
        value = 0 if value == 7 else value
    return value in matched


def _item_values(item: str, low: int, high: int) -> set[int]:
    match = ITEM.fullmatch(item)
    if match is None:
        raise ValueError(f"malformed item {item!r}")
    span, step_text = match.groups()
    if span == "*":
        start, end = low, high
    elif "-" in span:
        start, end = (int(part) for part in span.split("-"))
    else:
        if step_text is not None:
            raise ValueError(f"a step needs '*' or a range: {item!r}")
        start = end = int(span)
    if not low <= start <= end <= high:
        raise ValueError(f"{item!r} is outside {low}-{high} or its range is reversed")
    step = 1 if step_text is None else int(step_text)
    if step < 1:
        raise ValueError(f"step must be at least 1: {item!r}")
    return set(range(start, end + 1, step))
