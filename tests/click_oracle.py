"""A plain per-session EM of PBM and DBN, written from the book's generative stories (the oracle of
tests/test_clicks_models.py and the peer of benchmarks/clicks.py, as PyClick cannot be installed).

Sessions are ``(query, [doc, ...], [click, ...])``; parameters are dicts keyed by (query, doc) and rank.
Every E-step enumerates a session's hidden states one by one (for the DBN: whether the user was
satisfied at the last click and at which rank they stopped), so it shares no formula with the
package's vectorised sufficient-statistics EM.
"""

from __future__ import annotations

from collections import defaultdict

DEFAULT = 0.5


def pbm_em(sessions, iterations: int):
    alpha: dict = defaultdict(lambda: DEFAULT)
    gamma: dict = defaultdict(lambda: DEFAULT)
    for _ in range(iterations):
        num_a, den_a = defaultdict(float), defaultdict(float)
        num_g, den_g = defaultdict(float), defaultdict(float)
        for q, docs, clicks in sessions:
            for r, (d, c) in enumerate(zip(docs, clicks)):
                a, g = alpha[q, d], gamma[r]
                if c:
                    ea = eg = 1.0
                else:
                    ea = a * (1 - g) / (1 - a * g)
                    eg = g * (1 - a) / (1 - a * g)
                num_a[q, d] += ea
                den_a[q, d] += 1
                num_g[r] += eg
                den_g[r] += 1
        alpha = defaultdict(lambda: DEFAULT, {k: num_a[k] / den_a[k] for k in den_a})
        gamma = defaultdict(lambda: DEFAULT, {k: num_g[k] / den_g[k] for k in den_g})
    return dict(alpha), dict(gamma)


def _dbn_states(docs, clicks, alpha, sigma, gamma):
    """Every hidden state consistent with the clicks: (probability, stop rank, satisfied at the last click)."""
    n = len(docs)
    last = max((r for r, c in enumerate(clicks) if c), default=-1)
    states = []
    for stop in range(max(last, 0), n):
        for sat in [True, False] if last >= 0 else [False]:
            if sat and stop != last:
                continue
            p = 1.0
            for r in range(stop + 1):
                a = alpha[docs[r]]
                if clicks[r]:
                    p *= a
                    s = sigma[docs[r]]
                    if r < last:
                        p *= (1 - s) * gamma
                        continue
                    if sat:  # r == last == stop
                        p *= s
                        continue
                    p *= 1 - s
                else:
                    p *= 1 - a
                if r < stop:
                    p *= gamma
                elif r < n - 1:  # stopped here, and could have gone on
                    p *= 1 - gamma
            states.append((p, stop, sat))
    return last, states


def dbn_em(sessions, iterations: int):
    alpha: dict = defaultdict(lambda: DEFAULT)
    sigma: dict = defaultdict(lambda: DEFAULT)
    gamma = DEFAULT
    for _ in range(iterations):
        num_a, den_a = defaultdict(float), defaultdict(float)
        num_s, den_s = defaultdict(float), defaultdict(float)
        taken = chances = 0.0
        for q, docs, clicks in sessions:
            keys = [(q, d) for d in docs]
            n = len(docs)
            last, states = _dbn_states(keys, clicks, alpha, sigma, gamma)
            total = sum(p for p, _, _ in states)
            for p, stop, sat in states:
                w = p / total
                for r in range(n):
                    if clicks[r]:
                        num_a[keys[r]] += w
                    elif r > stop:  # not examined: attracted as the prior says
                        num_a[keys[r]] += w * alpha[keys[r]]
                    den_a[keys[r]] += w
                    if clicks[r]:
                        num_s[keys[r]] += w * (sat and r == last)
                        den_s[keys[r]] += w
                    if r < n - 1 and r <= stop and not (sat and r == last):
                        chances += w
                        taken += w * (r < stop)
        alpha = defaultdict(lambda: DEFAULT, {k: num_a[k] / den_a[k] for k in den_a})
        sigma = defaultdict(lambda: DEFAULT, {k: (num_s[k] / den_s[k] if den_s[k] else sigma[k]) for k in den_a})
        gamma = taken / chances if chances else gamma
    return dict(alpha), dict(sigma), gamma
