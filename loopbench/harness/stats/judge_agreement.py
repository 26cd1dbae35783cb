"""How well a judge's verdicts agree with a person's labels (``loopbench judge calibrate``):
agreement, sensitivity and specificity with Wilson intervals, Cohen's kappa with its
asymptotic interval, and whether the judge treats arms differently.

Sensitivity is the share of answers the person labelled right that the judge passed;
specificity the share of those labelled wrong that it failed. A judge that favours one
pattern's style shows as different rates on different arms: equal sensitivity (and equal
specificity) across arms is tested with Fisher's exact test for two arms and the
likelihood-ratio (G) test for more, each on the arms with labelled answers of that kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from loopbench.harness.stats.intervals import Z95, wilson_interval
from loopbench.harness.stats.judge_correction import JudgeRates

#: Below this p-value the judge is said to treat arms differently.
ALPHA = 0.05


@dataclass(frozen=True)
class Rate:
    """A share and its Wilson 95% interval (nan throughout when nothing was counted)."""

    value: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, hits: int, n: int) -> Rate:
        low, high = wilson_interval(hits, n)
        return cls(hits / n if n else math.nan, low, high, n)


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa and its asymptotic 95% interval (Fleiss, Cohen and Everitt, 1969)."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Agreement:
    """A judge's agreement with the labels on one set of labelled answers."""

    labelled: int
    agreement: Rate
    sensitivity: Rate
    specificity: Rate
    kappa: Kappa

    @classmethod
    def of(cls, rates: JudgeRates) -> Agreement:
        return cls(
            rates.labelled,
            Rate.of(rates.true_pass + rates.true_fail, rates.labelled),
            Rate.of(rates.true_pass, rates.true_pass + rates.false_fail),
            Rate.of(rates.true_fail, rates.true_fail + rates.false_pass),
            cohens_kappa(rates),
        )


def cohens_kappa(rates: JudgeRates, z: float = Z95) -> Kappa:
    """Kappa of the judge's verdicts against the labels, with the large-sample variance of
    Fleiss, Cohen and Everitt (as statsmodels' ``cohens_kappa`` computes it); the interval
    held to [-1, 1]. nan when there are no labels, or every verdict and label is one value
    (chance agreement 1: kappa is undefined)."""
    table = np.array(
        [[rates.true_pass, rates.false_pass], [rates.false_fail, rates.true_fail]], dtype=float
    )  # rows: the judge's verdict (pass, fail); columns: the label (right, wrong)
    n = table.sum()
    if n == 0:
        return Kappa(math.nan, math.nan, math.nan)
    probs = table / n
    rows, columns = probs.sum(axis=1), probs.sum(axis=0)
    observed, chance = float(np.trace(probs)), float((rows * columns).sum())
    if chance >= 1:
        return Kappa(math.nan, math.nan, math.nan)
    kappa = (observed - chance) / (1 - chance)
    on_diagonal = float((np.diag(probs) * (1 - (rows + columns) * (1 - kappa)) ** 2).sum())
    off = probs * (columns[:, None] + rows[None, :]) ** 2
    np.fill_diagonal(off, 0.0)
    variance = (
        on_diagonal + (1 - kappa) ** 2 * float(off.sum()) - (kappa - chance * (1 - kappa)) ** 2
    ) / ((1 - chance) ** 2 * n)
    half = z * math.sqrt(max(variance, 0.0))
    return Kappa(kappa, max(-1.0, kappa - half), min(1.0, kappa + half))


@dataclass(frozen=True)
class ArmsTest:
    """A test of one rate's equality across arms: which, the p-value, and the arms with the
    lowest and the highest rate."""

    rate: str
    """``sensitivity`` or ``specificity``."""
    p_value: float
    lowest: tuple[str, float]
    highest: tuple[str, float]

    @property
    def differs(self) -> bool:
        return self.p_value < ALPHA

    def describe(self) -> str:
        """The finding in words, naming the arms and their rates."""
        (low_arm, low), (high_arm, high) = self.lowest, self.highest
        what = "fails right answers" if self.rate == "sensitivity" else "passes wrong answers"
        # Fewer right answers passed is a lower sensitivity; more wrong answers passed a
        # lower specificity: the arm named first has the lower rate.
        return (
            f"the judge {what} of {low_arm} more often than of {high_arm} ({self.rate} "
            f"{low:.2f} vs {high:.2f}, p = {_p(self.p_value)})"
        )


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def arms_tests(arms: Mapping[str, JudgeRates]) -> list[ArmsTest]:
    """Tests of equal sensitivity and of equal specificity across the arms, each over the
    arms with labelled answers of that kind (right ones, wrong ones); a rate with fewer
    than two such arms is not tested."""
    found = []
    for rate, counts in (
        ("sensitivity", {a: (r.true_pass, r.false_fail) for a, r in arms.items()}),
        ("specificity", {a: (r.true_fail, r.false_pass) for a, r in arms.items()}),
    ):
        # guard: arms-test-needs-labels-of-kind
        kept = {arm: pair for arm, pair in counts.items() if sum(pair) > 0}
        if len(kept) < 2:
            continue
        shares = {arm: hits / (hits + misses) for arm, (hits, misses) in kept.items()}
        lowest = min(shares, key=lambda arm: (shares[arm], arm))
        highest = max(shares, key=lambda arm: (shares[arm], arm))
        p = equal_shares_p(list(kept.values()))
        found.append(ArmsTest(rate, p, (lowest, shares[lowest]), (highest, shares[highest])))
    return found


def equal_shares_p(counts: list[tuple[int, int]]) -> float:
    """The p-value of equal shares across groups, each (hits, misses): Fisher's exact test
    (two-sided) for two groups, the likelihood-ratio test for more; 1 when every count of
    one kind is zero (nothing can differ)."""
    from scipy import stats

    table = np.array(counts, dtype=float)
    if (table.sum(axis=0) == 0).any():
        return 1.0
    if len(counts) == 2:
        return float(stats.fisher_exact(table.astype(int)).pvalue)
    return float(stats.chi2_contingency(table, correction=False, lambda_="log-likelihood").pvalue)
