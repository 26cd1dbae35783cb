"""The power ``loopbench power`` reports against the simulated power of the paired test it is
about (``loopbench.harness.stats.sign_flip``: sign flips of per-task differences, two-sided, mid-p).

``loopbench power`` finds a power one of three ways
(``loopbench.harness.report.power.design_power``): exactly with one run a task, by simulation with
repeats and fewer than NORMAL_FROM tasks, and by normal theory otherwise. Each is compared here with
runs simulated afresh.

Two models of tasks (``bench/simulated.py``) give paired right-or-wrong runs with the
accuracies p_A = baseline and p_B = baseline + delta, the ICC rho and the arm correlation
kappa = Corr(P_A, P_B) of the two arms' chances on a task:

- comonotone: Beta chances with ICC rho for both arms, B's the quantile of A's on its own
  Beta with a probability that sets kappa (else an independent draw);
- logit: correlated normal task effects on the logit scale, solved for the pooled ICC
  and kappa.

Each simulated experiment draws N tasks and R runs per arm and task and applies the test
at alpha. The power reported is given each model's own rho and kappa (the comonotone
model's kappa as realised: a quantile map of two Betas of other means correlates a little
under 1). Printed: per model, N and ICC, the largest |reported - simulated| over the
settings with reported power 0.1 to 0.95; the largest and mean gap by the way it was
found; and, for comparison, the gap of the t test's power (what ``power`` reported before).
Where the power is simulated, the logit model's runs show how much the spread of
difficulty alone moves it.

    .venv/bin/python -m bench.power_check                  # 2000 simulations a setting
    .venv/bin/python -m bench.power_check --sims 500 --detail
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections import defaultdict

import numpy as np
from tabulate import tabulate

from bench.simulated import _comonotone_correlation, logit_parameters, paired_chances
from loopbench.harness.report.power import Design, design_power, difference_variance
from loopbench.harness.stats.distributions import t_power
from loopbench.harness.stats.sign_flip import sign_flip_p

MODELS = ("comonotone", "logit")
GRID = {
    "tasks": (20, 50, 100, 200),
    "repeats": (1, 3, 10),
    "icc": (0.0, 0.15, 0.3, 0.6),
    "baseline": (0.3, 0.56, 0.8),
    "delta": (0.05, 0.1, 0.2),
    "kappa": (0.5, 0.8, 1.0),
}
ALPHA = 0.05


def realised_kappa(model: str, p_a: float, p_b: float, icc: float, kappa: float) -> float:
    """The arm correlation the model gives when asked for ``kappa``."""
    if icc == 0:
        return 1.0
    if model == "comonotone":
        return min(kappa, _comonotone_correlation(p_a, p_b, icc))
    if logit_parameters(p_a, p_b, icc, kappa)[3] < 1:
        return kappa
    return _logit_ceiling(p_a, p_b, icc)


def _logit_ceiling(p_a: float, p_b: float, icc: float) -> float:
    """Corr(P_A, P_B) with one shared logit effect (the most the logit model gives)."""
    mu_a, mu_b, tau, _ = logit_parameters(p_a, p_b, icc, 1.0)
    z, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    pa, pb = 1 / (1 + np.exp(-(mu_a + tau * z))), 1 / (1 + np.exp(-(mu_b + tau * z)))
    cov = float(w @ (pa * pb)) - p_a * p_b
    return cov / math.sqrt((float(w @ pa**2) - p_a**2) * (float(w @ pb**2) - p_b**2))


def simulated_power(
    model: str, values: tuple[float, ...], sims: int, rng: np.random.Generator
) -> float:
    tasks, repeats, icc, baseline, delta, kappa = values
    p_a, p_b = paired_chances(
        model, baseline, baseline + delta, icc, kappa, (sims, int(tasks)), rng
    )
    a, b = rng.binomial(int(repeats), p_a), rng.binomial(int(repeats), p_b)
    runs = np.full(int(tasks), int(repeats))
    return float(np.mean([sign_flip_p(y, x, runs) < ALPHA for x, y in zip(a, b, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="experiments a setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--detail", action="store_true", help="also print every setting")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    began = time.perf_counter()
    gaps, t_gaps, by_method = defaultdict(list), defaultdict(list), defaultdict(list)
    detail = []
    for values in itertools.product(*GRID.values()):
        tasks, repeats, icc, baseline, delta, kappa = values
        if (icc == 0 and kappa != 1.0) or not 0 < baseline + delta < 1:
            continue  # every task alike: kappa does not enter
        for model in MODELS:
            k = realised_kappa(model, baseline, baseline + delta, icc, kappa)
            design = Design(baseline, delta, int(repeats), icc, k, ALPHA)
            reported = design_power(design, int(tasks))
            if not 0.1 <= reported.value <= 0.95:
                continue
            simulated = simulated_power(model, values, args.sims, rng)
            sd = math.sqrt(difference_variance(baseline, baseline + delta, repeats, icc, k))
            t_test = t_power(delta * math.sqrt(tasks) / sd, int(tasks) - 1, ALPHA)
            gap = reported.value - simulated
            gaps[(model, tasks, icc)].append(gap)
            t_gaps[(model, tasks, icc)].append(t_test - simulated)
            by_method[(reported.method, model)].append(gap)
            detail.append([model, *values, f"{k:.3f}", reported.method, f"{reported.value:.3f}",
                           f"{simulated:.3f}", f"{gap:+.3f}"])  # fmt: skip
    print("Largest |reported - simulated power| of the paired test, reported power 0.1-0.95:")
    print(_matrix(gaps))
    print("\nThe same for the t test's power by normal theory (what `power` reported before):")
    print(_matrix(t_gaps))
    rows = [
        [method, model, len(values), f"{max(map(abs, values)):.3f}", f"{np.mean(values):+.4f}"]
        for (method, model), values in sorted(by_method.items())
    ]
    print("\nBy the way the power was found:")
    print(
        tabulate(
            rows, ["method", "model", "settings", "largest gap", "mean gap"], tablefmt="github"
        )
    )
    if args.detail:
        headers = ["model", *GRID, "kappa realised", "method", "reported", "simulated", "gap"]
        print("\n" + tabulate(detail, headers, tablefmt="github"))
    se = 0.5 / math.sqrt(args.sims)
    print(
        f"\n{len(detail)} (model, setting) pairs from {min(GRID['tasks'])} tasks up, "
        f"{args.sims} simulated experiments each (standard error at most {se:.3f}); "
        f"{time.perf_counter() - began:.0f} s."
    )


def _matrix(gaps: dict[tuple[str, float, float], list[float]]) -> str:
    rows = [
        [model, tasks, *(_largest(gaps.get((model, tasks, icc), [])) for icc in GRID["icc"])]
        for model in MODELS
        for tasks in GRID["tasks"]
    ]
    return tabulate(
        rows, ["model", "N", *(f"ICC {icc:g}" for icc in GRID["icc"])], tablefmt="github"
    )


def _largest(values: list[float]) -> str:
    return f"{max(map(abs, values)):.3f}" if values else "—"


if __name__ == "__main__":
    main()
