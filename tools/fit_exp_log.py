"""Fits the polynomials of the inline float32 exp and log (csrc/elementwise/cpu/elementwise_simd_math.h).

exp(r) = 1 + r + r^2 Q(r) on |r| <= ln2 / 2 (Q of degree 4) and log(1 + f) = f - f^2 / 2 +
f^3 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1] (P of degree 7), each near-minimax in the relative error
of the whole function (Lawson's iteratively reweighted least squares on Chebyshev points, in
float64), then rounded to float32. Prints each fit's error before and after the rounding and the
coefficients, lowest degree first. The kernels' accuracy itself is checked on every float32 input
(docs/exactness.md); this only makes the coefficients reproducible.

    python tools/fit_exp_log.py
"""

import numpy as np


def fit(fun, lo, hi, deg, weight, iters=30):
    x = np.cos(np.linspace(0, np.pi, 4000)) * (hi - lo) / 2 + (hi + lo) / 2
    y, w, lw = fun(x), weight(x), np.ones_like(x)
    V = np.vander(x, deg + 1, increasing=True)
    for _ in range(iters):
        c = np.linalg.lstsq(V * (w * np.sqrt(lw))[:, None], y * w * np.sqrt(lw), rcond=None)[0]
        lw = lw * np.abs((V @ c - y) * w)
        lw /= lw.sum()
    c32 = c.astype(np.float32).astype(np.float64)
    xs = np.linspace(lo, hi, 200001)
    Vs = np.vander(xs, deg + 1, increasing=True)
    err = lambda cc: float(np.max(np.abs((Vs @ cc - fun(xs)) * weight(xs))))
    return c32, err(c), err(c32)


def main():
    half_ln2 = 0.34658 * 1.0002  # ln2 / 2 = 0.346574, and a little more: the reduction's |r| reaches past it
    q = lambda r: np.where(np.abs(r) < 1e-4, 0.5 + r / 6 + r * r / 24, (np.expm1(r) - r) / np.where(r == 0, 1, r * r))
    c, e, e32 = fit(q, -half_ln2, half_ln2, 4, lambda r: r * r / np.exp(r))
    print(f"exp Q (degree 4): relative error {e:.3g}, {e32:.3g} with float32 coefficients")
    print("  " + ", ".join(f"{v:.10e}f" for v in c))
    lo, hi = np.sqrt(0.5) - 1, np.sqrt(2) - 1
    p = lambda f: np.where(
        np.abs(f) < 1e-3,
        1 / 3 - f / 4 + f * f / 5 - f**3 / 6,
        (np.log1p(f) - f + f * f / 2) / np.where(f == 0, 1, f**3),
    )
    c, e, e32 = fit(p, lo, hi, 7, lambda f: f * f)
    print(f"log P (degree 7): relative error {e:.3g}, {e32:.3g} with float32 coefficients")
    print("  " + ", ".join(f"{v:.10e}f" for v in c))


if __name__ == "__main__":
    main()
