"""The power formula of ``loopbench power`` against simulated runs, on a grid of designs.

Two models generate paired right-or-wrong runs with a task-level correlation, each set to
the stated accuracies p_A = baseline, p_B = baseline + delta and ICC rho (pooled over the
two arms: the share of a run's variance that lies between tasks):

- beta: a shared task difficulty X ~ Beta on [0, 1 - delta] with mean p_A and variance
  rho (v_A + v_B) / 2; arm A is right with probability X, arm B with X + delta;
- logit: a shared random task intercept u ~ N(0, tau^2); arm A is right with probability
  expit(mu_A + u), arm B with expit(mu_B + u), mu_A, mu_B and tau solved (Gauss-Hermite
  quadrature, bisection) for the stated accuracies and ICC.

Each simulated experiment draws N tasks and R runs per arm and task, then tests the
per-task mean differences two-sided at alpha with the paired t test (the formula's
test) and with loopbench's sign-flip test (``stats.paired_difference``). The formula's
power uses the default arm correlation (shared) for both models.

Printed: per model, number of tasks and ICC, the largest |formula - simulated| over the
grid's settings with formula power 0.1 to 0.95; the same for the plain normal
approximation and for the sign-flip test; how far the two models' simulated powers part
(a formula from accuracies and ICC alone cannot be nearer both than half that); and the
largest gap where simulation backs the formula (N >= max(10, 500 ICC^2)).

    .venv/bin/python bench/power_check.py                  # 4000 simulations a setting
    .venv/bin/python bench/power_check.py --sims 20000 --detail
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats
from tabulate import tabulate

from harness.report.power import difference_variance, paired_power, reliable_from

MODELS = ("beta", "logit")
#: Gauss-Hermite points and weights for expectations over a standard normal.
_Z, _W = np.polynomial.hermite_e.hermegauss(80)
_W = _W / _W.sum()


@dataclass(frozen=True)
class Setting:
    tasks: int
    repeats: int
    icc: float
    baseline: float
    delta: float
    alpha: float = 0.05

    @property
    def p_b(self) -> float:
        return self.baseline + self.delta

    def feasible(self, model: str) -> bool:
        """Whether the model can give these accuracies and ICC (beta's difficulty must fit
        in [0, 1 - delta] with the variance asked)."""
        if not 0 < self.baseline < self.p_b < 1:
            return False
        return model != "beta" or _task_variance(self) < self.baseline * (
            1 - self.delta - self.baseline
        )

    def formula(self) -> float:
        """``loopbench power``'s power, with its default arm correlation (shared)."""
        sd = math.sqrt(difference_variance(self.baseline, self.p_b, self.repeats, self.icc))
        return paired_power(self.tasks, sd, self.delta, self.alpha)

    def normal(self) -> float:
        """The normal approximation (no small-sample correction), for comparison."""
        sd = math.sqrt(difference_variance(self.baseline, self.p_b, self.repeats, self.icc))
        shift, z = self.delta * math.sqrt(self.tasks) / sd, stats.norm.ppf(1 - self.alpha / 2)
        return float(stats.norm.cdf(shift - z) + stats.norm.cdf(-shift - z))


def _task_variance(s: Setting) -> float:
    return s.icc * (s.baseline * (1 - s.baseline) + s.p_b * (1 - s.p_b)) / 2


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing function on [lo, hi], by bisection."""
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def _location(p: float, tau: float) -> float:
    return _root(lambda mu: float(_W @ _expit(mu + tau * _Z)) - p, -40, 40)


@cache
def logit_parameters(p_a: float, p_b: float, icc: float) -> tuple[float, float, float]:
    """mu_A, mu_B and tau giving accuracies p_A, p_B and the pooled ICC."""

    def pooled_icc(tau: float) -> float:
        between = sum(
            float(_W @ _expit(_location(p, tau) + tau * _Z) ** 2) - p * p for p in (p_a, p_b)
        )
        return between / (p_a * (1 - p_a) + p_b * (1 - p_b))

    tau = _root(lambda t: pooled_icc(t) - icc, 0, 30) if icc > 0 else 0.0
    return _location(p_a, tau), _location(p_b, tau), tau


def task_probabilities(
    model: str, s: Setting, sims: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each arm's chance of a right run, per simulated experiment and task: (sims, tasks)."""
    shape = (sims, s.tasks)
    if s.icc == 0:
        return np.full(shape, s.baseline), np.full(shape, s.p_b)
    if model == "beta":
        scale = 1 - s.delta
        mean, variance = s.baseline / scale, _task_variance(s) / scale**2
        size = mean * (1 - mean) / variance - 1
        x = rng.beta(mean * size, (1 - mean) * size, shape) * scale
        return x, x + s.delta
    mu_a, mu_b, tau = logit_parameters(s.baseline, s.p_b, s.icc)
    u = rng.normal(0, tau, shape)
    return _expit(mu_a + u), _expit(mu_b + u)


def task_differences(model: str, s: Setting, sims: int, rng: np.random.Generator) -> np.ndarray:
    """Simulated experiments (rows) of per-task mean differences, B minus A, R runs each."""
    p_a, p_b = task_probabilities(model, s, sims, rng)
    return (rng.binomial(s.repeats, p_b) - rng.binomial(s.repeats, p_a)) / s.repeats


def t_test_rejects(d: np.ndarray, alpha: float) -> np.ndarray:
    """The paired t test of each row, two-sided; scipy's t quantile, not loopbench's."""
    tasks = d.shape[1]
    mean, sd = d.mean(axis=1), d.std(axis=1, ddof=1)
    spread = sd > 1e-12
    statistic = np.abs(mean) * math.sqrt(tasks) / np.where(spread, sd, 1.0)
    # Every task's difference alike: the statistic is infinite unless that difference is 0.
    return np.where(spread, statistic > stats.t.ppf(1 - alpha / 2, tasks - 1), mean != 0)


def sign_flip_rejects(
    d: np.ndarray, alpha: float, rng: np.random.Generator, rounds: int = 1000
) -> np.ndarray:
    """loopbench's by-task test (``stats._sign_flip_p``), one set of sign flips for all rows."""
    signs = rng.choice([-1.0, 1.0], size=(d.shape[1], rounds))
    observed = np.abs(d.mean(axis=1))
    flipped = np.abs(d @ signs) / d.shape[1]
    p = (1 + (flipped >= observed[:, None] - 1e-12).sum(axis=1)) / (rounds + 1)
    return d.any(axis=1) & (p < alpha)


def simulated_power(model: str, s: Setting, sims: int, rng: np.random.Generator) -> float:
    return float(t_test_rejects(task_differences(model, s, sims, rng), s.alpha).mean())


GRID = {
    "tasks": (10, 20, 50, 200),
    "repeats": (1, 3, 10),
    "icc": (0.0, 0.15, 0.3, 0.45, 0.6),
    "baseline": (0.3, 0.45, 0.56, 0.7, 0.8),
    "delta": (0.05, 0.1, 0.2, 0.3),
}


def _matrix(gaps: dict[tuple[str, int, float], list[float]], models: tuple[str, ...]) -> str:
    iccs = GRID["icc"]
    rows = [
        [model, tasks, *(_largest(gaps.get((model, tasks, icc), [])) for icc in iccs)]
        for model in models
        for tasks in GRID["tasks"]
    ]
    return tabulate(rows, ["model", "N", *(f"ICC {icc:g}" for icc in iccs)], tablefmt="github")


def _largest(values: list[float]) -> str:
    return f"{max(map(abs, values)):.3f}" if values else "—"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000, help="experiments a setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--detail", action="store_true", help="also print every setting")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    began = time.perf_counter()
    formula, normal, flip, apart = (defaultdict(list) for _ in range(4))
    backed: list[float] = []
    detail = []
    for values in itertools.product(*GRID.values()):
        s = Setting(*values)
        if not 0 < s.p_b < 1 or not 0.1 <= (predicted := s.formula()) <= 0.95:
            continue
        simulated = {}
        for model in MODELS:
            if not s.feasible(model):
                continue
            d = task_differences(model, s, args.sims, rng)
            simulated[model] = float(t_test_rejects(d, s.alpha).mean())
            flipped = float(sign_flip_rejects(d, s.alpha, rng).mean())
            cell = (model, s.tasks, s.icc)
            formula[cell].append(predicted - simulated[model])
            normal[cell].append(s.normal() - simulated[model])
            flip[cell].append(predicted - flipped)
            if s.tasks >= reliable_from(s.icc):
                backed.append(predicted - simulated[model])
            detail.append([model, *values, f"{predicted:.3f}", f"{simulated[model]:.3f}",
                           f"{flipped:.3f}", f"{predicted - simulated[model]:+.3f}"])  # fmt: skip
        if len(simulated) == 2:
            apart[("beta vs logit", s.tasks, s.icc)].append(simulated["beta"] - simulated["logit"])
    se = 0.5 / math.sqrt(args.sims)
    print("Largest |formula - simulated power| (t test), settings with formula power 0.1-0.95:")
    print(_matrix(formula, MODELS))
    print("\nThe same for the normal approximation:")
    print(_matrix(normal, MODELS))
    print("\nLargest |formula - simulated power of loopbench's sign-flip test|:")
    print(_matrix(flip, MODELS))
    print("\nLargest |beta - logit| simulated power (same accuracies, ICC, N, R):")
    print(_matrix(apart, ("beta vs logit",)))
    if args.detail:
        headers = ["model", "N", "R", "ICC", "baseline", "delta", "formula", "simulated",
                   "sign-flip", "formula - sim"]  # fmt: skip
        print("\n" + tabulate(detail, headers, tablefmt="github"))
    print(
        f"\n{len(detail)} (model, setting) pairs, {args.sims} simulated experiments each "
        f"(standard error at most {se:.3f}), {time.perf_counter() - began:.0f} s. Where "
        f"N >= max(10, 500 ICC^2) ({len(backed)} pairs): largest |formula - simulated| "
        f"{max(map(abs, backed)):.3f}, mean {np.mean(backed):+.4f}."
    )


if __name__ == "__main__":
    main()
