"""SLSQP with linear inequality constraints, driving SciPy's compiled SLSQP routine directly.

``scipy.optimize.minimize(method="SLSQP")`` spends most of a small warm-started arm solve (5
variables, 10 linear constraints, ~3 iterations) in per-call Python set-up: constraint
normalisation, a ``ScalarFunction`` wrapper, result objects. :func:`minimize_linear` runs the same
compiled routine (Kraft's SLSQP, SciPy's ``_slsqplib.slsqp``) with the same reverse-communication
loop as SciPy's ``_minimize_slsqp``, minus that set-up. The routine is private SciPy API, so when
it is missing or its interface changed the public ``minimize`` is used instead (same answer,
slower); ``tests/test_retarget_arm.py`` checks both paths agree.
"""
from __future__ import annotations

from typing import NamedTuple
from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize

try:                                      # SciPy >= 1.16: the C port of SLSQP
    from scipy.optimize._slsqplib import slsqp as _slsqp_c
except ImportError:                       # pragma: no cover - depends on the SciPy version
    _slsqp_c = None


class SlsqpResult(NamedTuple):
    x: np.ndarray          # (n,) solution
    nit: int               # SLSQP iterations
    mode: int              # SciPy exit mode: 0 converged, 9 iteration cap, others see scipy docs


def _index_dtype():
    try:
        from scipy.optimize._slsqp_py import HAS_ILP64
    except ImportError:                   # pragma: no cover
        return np.int32
    return np.int64 if HAS_ILP64 else np.int32


def _direct(fun_grad, x0, A, b, maxiter, ftol) -> SlsqpResult:
    n, m = x0.size, A.shape[0]
    state = {"acc": ftol, "alpha": 0.0, "f0": 0.0, "gs": 0.0, "h1": 0.0, "h2": 0.0, "h3": 0.0, "h4": 0.0,
             "t": 0.0, "t0": 0.0, "tol": 10.0 * ftol, "exact": 0, "inconsistent": 0, "reset": 0, "iter": 0,
             "itermax": int(maxiter), "line": 0, "m": m, "meq": 0, "mode": 0, "n": n}
    # Workspace sizes exactly as SciPy's _minimize_slsqp computes them (meq = 0, mieq = m > 0).
    size = n * (n + 1) // 2 + 3 * m * n + 9 * m + 8 * n * n + 35 * n + 28
    buffer, indices = np.zeros(max(size, 1)), np.zeros(max(m + 2 * n + 2, 1), dtype=_index_dtype())
    x = np.array(x0, dtype=np.float64)
    fx, g = fun_grad(x)
    g = np.asarray(g, dtype=np.float64)
    C = np.asfortranarray(A, dtype=np.float64)
    d = A @ x + b
    mult = np.zeros(max(1, m + 2 * n + 2))
    nan = np.full(n, np.nan)                                  # no simple bounds
    while True:
        _slsqp_c(state, fx, g, C, d, x, mult, nan, nan.copy(), buffer, indices)
        if state["mode"] == 1:
            fx = fun_grad(x)[0]
            d = A @ x + b
        if state["mode"] == -1:
            g = np.asarray(fun_grad(x)[1], dtype=np.float64)    # C (linear constraints) never changes
        if abs(state["mode"]) != 1:
            return SlsqpResult(x, int(state["iter"]), int(state["mode"]))


def _public(fun_grad, x0, A, b, maxiter, ftol) -> SlsqpResult:
    cons = {"type": "ineq", "fun": lambda z: A @ z + b, "jac": lambda z: A}
    res = minimize(fun_grad, x0, jac=True, method="SLSQP", constraints=cons,
                   options={"maxiter": maxiter, "ftol": ftol})
    return SlsqpResult(np.asarray(res.x, float), int(res.nit), int(res.status))


def minimize_linear(fun_grad: Callable, x0: np.ndarray, A: np.ndarray, b: np.ndarray, maxiter: int,
                    ftol: float, direct: bool = True) -> SlsqpResult:
    """min f(x) s.t. A x + b >= 0; ``fun_grad(x) -> (f, grad (n,))``; A (m, n), b (m,)."""
    if direct and _slsqp_c is not None:
        try:
            return _direct(fun_grad, x0, A, b, maxiter, ftol)
        except TypeError:                 # pragma: no cover - private interface changed
            pass
    return _public(fun_grad, x0, A, b, maxiter, ftol)
