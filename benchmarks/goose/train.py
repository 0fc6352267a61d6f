"""Train the WL-GOOSE peer on a dataset of labelled states (``gnnplan dataset``, format 2).

Pipeline: pick the training states of each problem, turn them into wlplan states, collect the
WL colours of their ILGs, embed them, then fit a linear model on the features:

- ``rank-svm`` (the ranking variant, after Chen, Trevizan & Thiébaux and GOOSE's
  ``SupportVectorMachineRanker``): for each training state s and one optimal successor s*
  (c(a) + V*(s*) = V*(s)), the pairs "s* better than s" and "s* better than s'" for every
  successor s' reached by a non-optimal action. A hinge-loss linear SVM without intercept is
  fitted on the differences x(worse) - x(better), half of them flipped at random so that both
  classes are present. GOOSE learns from optimal plans and must treat every sibling as "maybe
  worse"; our datasets hold exact V* over whole state spaces, so siblings reached by another
  optimal action are known to be as good, and are not ranked.
- ``gpr`` (WL-GOOSE, "Return to Tradition"): Gaussian-process regression of V* with a
  dot-product kernel, whose posterior mean is linear in the features: w = X^T (K + alpha I)^-1 y.

Both give h(s) = w . x(s). Identical feature vectors are merged before fitting (rank pairs
between them say nothing; regression targets are averaged).

Usage::

    from benchmarks.goose.train import TrainConfig, train_file
    record = train_file("blocksworld.npz", "blocksworld.json", TrainConfig())
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

MODELS = ("rank-svm", "gpr")
EMBED_CHUNK = 512  # states embedded per wlplan call while building the training matrix


@dataclass
class TrainConfig:
    """How to train the peer."""

    model: str = "rank-svm"  # rank-svm (ranking variant) or gpr (WL-GOOSE regression of h*)
    iterations: int = 2  # WL iterations on the ILG (GOOSE's default)
    multiset_hash: bool = True  # neighbour colours as multisets, as in standard WL (GOOSE's default)
    max_rows: int = 2000  # states embedded per problem at most (training states and their successors)
    svm_c: float = 1.0  # regularisation of the rank-SVM (GOOSE: 1.0)
    gpr_alpha: float = 1e-7  # noise of the GP regression (GOOSE: 1e-7, raised tenfold while singular)
    max_regression_states: int = 5000  # distinct feature vectors the GP is fitted on at most
    seed: int = 0


# -- training data -----------------------------------------------------------------------------

def _optimal(value_i: float, cost: np.ndarray, value_next: np.ndarray) -> np.ndarray:
    """Return which transitions of a state are optimal: c(a) + V*(s') = V*(s)."""
    return np.abs(cost + value_next - value_i) <= 1e-9 * max(1.0, abs(value_i))


def select(dataset, problem: int, max_rows: int, rng) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """Return (rows to embed, (better, worse) row pairs, regression rows) of one problem.

    Training states are the problem's non-goal states with a finite V* and recorded actions,
    taken in random order while the rows to embed (each state, its optimal successor and the
    successors it is ranked against) stay within ``max_rows``.
    """
    rows = np.flatnonzero(dataset.state_problem == problem)
    value = dataset.value
    candidates = [int(i) for i in rows if dataset.has_actions[i] and not dataset.is_goal[i] and np.isfinite(value[i])]
    rng.shuffle(candidates)
    used: dict[int, None] = {}
    pairs: list[tuple[int, int]] = []
    for i in candidates:
        _, _, cost, nxt = dataset.actions(i)
        labelled = nxt >= 0
        cost, nxt = cost[labelled], nxt[labelled]
        if len(nxt) == 0:
            continue
        optimal = _optimal(value[i], cost, value[nxt])
        if not optimal.any():
            continue
        best = int(nxt[np.flatnonzero(optimal)[0]])
        worse = [int(k) for k in nxt[~optimal]]
        new = [r for r in dict.fromkeys([i, best, *worse]) if r not in used]
        if len(used) + len(new) > max_rows and used:
            break
        used.update(dict.fromkeys(new))
        pairs.append((best, i))
        pairs.extend((best, k) for k in worse)
    # Every embedded state is labelled: regression uses those with a finite V*.
    return list(used), pairs, [r for r in used if np.isfinite(value[r])]


def _converters(dataset, domain):
    from benchmarks.goose.features import StateConverter

    return [StateConverter(domain, dataset.signature, p.object_names, p.static, p.goal, p.negative_goal)
            for p in dataset.problems]


# -- fitting ------------------------------------------------------------------------------------

def fit_rank_svm(X, pairs: np.ndarray, config: TrainConfig) -> tuple[np.ndarray, dict]:
    """Return the weights of a linear rank-SVM (h(better) < h(worse)) and its training accuracy."""
    import scipy.sparse as sp
    from sklearn.svm import LinearSVC

    better, worse = pairs[:, 0], pairs[:, 1]
    diff = (X[worse] - X[better]).tocsr()
    rng = np.random.default_rng(config.seed)
    sign = np.where(rng.random(len(pairs)) < 0.5, -1.0, 1.0)
    model = LinearSVC(loss="hinge", fit_intercept=False, C=config.svm_c, max_iter=100_000, random_state=config.seed)
    model.fit(sp.diags(sign) @ diff, sign)
    weights = model.coef_.reshape(-1)
    margin = diff @ weights
    return weights, {"pairs": len(pairs), "ranked_correctly": round(float(np.mean(margin > 0)), 4),
                     "iterations": int(model.n_iter_)}


def fit_gpr(X, y: np.ndarray, config: TrainConfig) -> tuple[np.ndarray, dict]:
    """Return the weights of the posterior mean of a dot-product-kernel GP regression of ``y``."""
    dense = X.toarray()
    kernel = dense @ dense.T
    alpha = config.gpr_alpha
    while True:
        try:
            factor = np.linalg.cholesky(kernel + alpha * np.eye(len(y)))
            break
        except np.linalg.LinAlgError:
            alpha *= 10  # as GOOSE: more noise until the kernel matrix factorises
            if alpha > 1:
                raise
    coef = np.linalg.solve(factor.T, np.linalg.solve(factor, y))
    weights = dense.T @ coef
    error = dense @ weights - y
    return weights, {"states": len(y), "alpha": alpha, "rmse": round(float(np.sqrt(np.mean(error ** 2))), 4)}


# -- the whole training ------------------------------------------------------------------------

def train(dataset, config: TrainConfig, log=print):
    """Return (feature generator, weights, record) trained on ``dataset`` (see the module docstring)."""
    import scipy.sparse as sp
    from wlplan.data import DomainDataset, ProblemDataset
    from wlplan.feature_generator import init_feature_generator

    from benchmarks.goose.features import embed, wl_domain

    if config.model not in MODELS:
        raise ValueError(f"unknown model {config.model!r}; choose one of {', '.join(MODELS)}")
    if config.model == "rank-svm":
        dataset.require_actions(dataset.domain, "the rank-SVM")
    start = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    domain = wl_domain(dataset.domain, dataset.signature)
    converters = _converters(dataset, domain)
    chosen = [select(dataset, p, config.max_rows, rng) for p in range(len(dataset.problems))]
    states = [[converters[p].state(dataset.fluent_atoms(r)) for r in rows] for p, (rows, _, _) in enumerate(chosen)]
    generator = init_feature_generator("wl", domain, graph_representation="ilg", iterations=config.iterations,
                                       multiset_hash=config.multiset_hash)
    generator.collect(DomainDataset(domain, [ProblemDataset(c.problem, s) for c, s in zip(converters, states) if s]))
    # Embed problem by problem and merge identical feature vectors into one row of X.
    unique: dict[bytes, int] = {}
    blocks, row_id = [], {}
    for p, (rows, _, _) in enumerate(chosen):
        for lo in range(0, len(rows), EMBED_CHUNK):
            features = embed(generator, domain, converters[p].problem, states[p][lo:lo + EMBED_CHUNK])
            for r, vector in zip(rows[lo:lo + EMBED_CHUNK], features):
                key = vector.tobytes()
                if key not in unique:
                    unique[key] = len(unique)
                    blocks.append(sp.csr_matrix(vector))
                row_id[r] = unique[key]
    X = sp.vstack(blocks).tocsr() if blocks else sp.csr_matrix((0, generator.get_n_features()))
    features_seconds = time.perf_counter() - start
    embedded = sum(len(rows) for rows, _, _ in chosen)
    log(f"{embedded:,} states embedded ({len(unique):,} distinct), {generator.get_n_features():,} WL features, "
        f"{features_seconds:.1f} s")
    fit_start = time.perf_counter()
    if config.model == "rank-svm":
        pairs = {(row_id[b], row_id[w]) for _, ps, _ in chosen for b, w in ps}
        pairs = np.array(sorted((b, w) for b, w in pairs if b != w), dtype=np.int64).reshape(-1, 2)
        if len(pairs) == 0:
            raise ValueError("no training pair: every optimal successor looks the same as the states it is ranked against")
        weights, fit = fit_rank_svm(X, pairs, config)
    else:
        targets: dict[int, list[float]] = {}
        for _, _, rows in chosen:
            for r in rows:
                targets.setdefault(row_id[r], []).append(float(dataset.value[r]))
        ids = np.array(sorted(targets), dtype=np.int64)
        if len(ids) > config.max_regression_states:
            ids = np.sort(rng.choice(ids, config.max_regression_states, replace=False))
        weights, fit = fit_gpr(X[ids], np.array([np.mean(targets[i]) for i in ids]), config)
    fit_seconds = time.perf_counter() - fit_start
    log(f"{config.model}: {fit}, {fit_seconds:.1f} s")
    record = {
        "config": asdict(config),
        "problems": [p.problem_file for p in dataset.problems],
        "states_embedded": embedded,
        "distinct_feature_vectors": len(unique),
        "features": generator.get_n_features(),
        "fit": fit,
        "seconds": {"features": round(features_seconds, 2), "fit": round(fit_seconds, 2),
                    "total": round(time.perf_counter() - start, 2)},
    }
    return generator, weights, record


def train_file(dataset_path, out, config: TrainConfig | None = None, log=print) -> dict:
    """Train on a dataset file and write the model to ``out``; return the training record."""
    import sklearn
    import wlplan

    from benchmarks.goose.features import save_model
    from up_gnnplan.datasets.store import Dataset

    config = config or TrainConfig()
    dataset = Dataset.load(dataset_path)
    generator, weights, record = train(dataset, config, log)
    record.update(dataset=str(dataset_path), wlplan=wlplan.__version__, scikit_learn=sklearn.__version__)
    save_model(out, generator, weights, {"domain": dataset.domain, "signature": dataset.signature.to_json(),
                                         "training": record})
    return record
