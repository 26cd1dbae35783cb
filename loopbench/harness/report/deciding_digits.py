"""Figures printed with the digits that decide: a verdict's number on its side of the
threshold it is judged by, and two costs that differ shown differing.

Rounding to a fixed number of digits can print a fall of 5.26% beyond a 5% threshold as
"fell 5% (more than 5%)", a p of 0.04996 below 0.05 as "p = 0.05", or costs of $0.000034
and $0.000041 as "$0.0000 → $0.0000". Each function here adds digits until what is shown
says what was decided.
"""

from __future__ import annotations

import math

#: No figure is shown with more decimals than this (a float holds about 16 digits).
MOST_DECIMALS = 12


def percent_beyond(value: float, threshold: float) -> tuple[str, str]:
    """``value`` and ``threshold`` (shares, 0.05 for 5%) as percentages: the threshold
    exactly, with the fewest decimals that do it, and the value with the fewest (and no
    fewer than the threshold's) that show it on the same side of the threshold as it is."""
    # guard: threshold-printed-exactly
    exact = next(
        d for d in range(MOST_DECIMALS + 1)
        if d == MOST_DECIMALS or math.isclose(
            round(100 * threshold, d), 100 * threshold, rel_tol=1e-9, abs_tol=1e-12)
    )  # fmt: skip
    limit = round(100 * threshold, exact)
    decimals = exact
    while decimals < MOST_DECIMALS and (round(100 * value, decimals) > limit) != (
        value > threshold
    ):
        decimals += 1
    return f"{100 * value:.{decimals}f}%", f"{100 * threshold:.{exact}f}%"


def below(value: float, threshold: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, or more until the figure shown is below
    ``threshold`` as the value is (a p-value beside the alpha it is judged by)."""
    for more in range(digits, 17):
        shown = f"{value:.{more}g}"
        if (float(shown) < threshold) == (value < threshold):
            return shown
    return repr(value)


def money(values: list[float], least: int = 4) -> int:
    """The decimals that show every one of ``values`` (dollars) with two significant digits
    at least, and tell apart any two that differ: at least ``least``."""
    finite = [v for v in values if math.isfinite(v)]
    nonzero = [abs(v) for v in finite if v]
    decimals = least
    if nonzero:
        decimals = max(least, 1 - math.floor(math.log10(min(nonzero))))
    distinct = len(set(finite))
    while decimals < MOST_DECIMALS and len({round(v, decimals) for v in finite}) < distinct:
        decimals += 1
    return min(decimals, MOST_DECIMALS)


def dollars(value: float, decimals: int, sign: bool = False) -> str:
    """``$0.000034`` (``+$0.000034`` with ``sign``); a dash for an unknown value."""
    if math.isnan(value):
        return "—"
    mark = "-" if value < 0 else "+" if sign else ""
    return f"{mark}${abs(value):.{decimals}f}"


__all__ = ["below", "dollars", "money", "percent_beyond"]
