"""The fit behind the shipped models' weights (``bench/calibrate_confidence.py``, ``bench/calibrate_support.py``):
a weighted, L2-penalised logistic regression whose coefficients are each held to a sign."""
from __future__ import annotations

import numpy as np


def sign_bounds(signs) -> list[tuple[float | None, float | None]]:
    """L-BFGS-B bounds for coefficients of ``signs``: +1 at least 0, -1 at most 0, 0 free."""
    return [(0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in signs]


def signed_logistic(a: np.ndarray, y: np.ndarray, reg: np.ndarray, bounds, weight: np.ndarray | None = None,
                    offset: np.ndarray | None = None) -> np.ndarray:
    """The coefficients of ``a`` (the design matrix: a column of ones for a bias, if any) minimising the
    ``weight``-ed log-loss of ``y`` plus ``reg[j] / 2`` times each squared coefficient, within ``bounds``;
    ``offset``: a fixed log-odds added to every row's. Raises RuntimeError if the fit does not converge."""
    from scipy.optimize import minimize  # the test and bench extras'

    base = 0.0 if offset is None else offset
    weight = np.ones(len(y)) if weight is None else weight

    def loss(w):
        z = base + a @ w
        p = 1 / (1 + np.exp(-np.clip(z, -40, 40)))
        nll = weight @ (y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z))
        return float(nll + 0.5 * reg @ (w * w)), a.T @ (weight * (p - y)) + reg * w
    fit = minimize(loss, np.zeros(a.shape[1]), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 5000, "gtol": 1e-9})
    if not fit.success and _projected_gradient(fit.jac, fit.x, bounds) > GRADIENT_TOLERANCE * max(1, fit.fun):
        raise RuntimeError(f"the logistic fit did not converge: {fit.message}")
    return fit.x


# The largest gradient, over the loss, at which a fit the line search gave up on has converged: L-BFGS-B
# stops "ABNORMAL" where rounding leaves no step that lowers the loss, at a gradient far above its gtol
# but, on a loss of a few hundred, in its sixth decimal.
GRADIENT_TOLERANCE = 1e-6


def _projected_gradient(jac: np.ndarray, x: np.ndarray, bounds) -> float:
    """The largest component of the gradient that a step within ``bounds`` could follow."""
    g = np.asarray(jac, float).copy()
    for i, (lo, hi) in enumerate(bounds):
        if lo is not None and x[i] <= lo and g[i] > 0 or hi is not None and x[i] >= hi and g[i] < 0:
            g[i] = 0.0
    return float(np.abs(g).max()) if g.size else 0.0
