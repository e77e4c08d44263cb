"""The exact Fourier (Walsh-Hadamard) transform of tree ensembles, as sparse spectra.

A regression tree on 0/1 features is a sum over its leaves of ``value * indicator(path)``, and
the indicator of a path that fixes the distinct features F (x_i = 0 on the left, 1 on the right)
is ``prod_{i in F} (1 +- chi_i) / 2``. Expanded, a leaf at depth d contributes
``value * 2^-d * (-1)^{|S & right-turns|}`` to the coefficient of every subset S of F. This is
the recursion of the paper's Appendix D.1 unrolled, so the degree never exceeds the depth and
a tree has at most ``sum_leaves 2^depth <= 4^depth`` coefficients. All leaves of one depth are
expanded together with array doubling steps, and equal frequencies are summed by sorting in
bounded chunks: no per-node or per-coefficient Python objects, memory bounded by the support
plus one chunk.

Convention (as in ``whcore.core.wht``): ``g(x) = sum_f G(f) (-1)^<f, x>``; a frequency is the integer
whose bit n-1-i is f_i (MSB-first, the index ``fwht`` uses).

Representation: ``SparseSpectrum.words`` is a (K, ceil(n/64)) uint64 bit-set array; bit b of
word w is bit 64w + b of that integer, so for n <= 64 word 0 *is* the packed frequency.
``.frequencies`` gives the packed integers: int64 for n <= 63, and for larger n an object array of
Python ints (the same MSB-first integers, built on request; use ``.words`` or ``.bits()`` on hot
paths).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bits import n_words, pack, parity, popcount, unpack
from .treemodels import Nodes, model_nodes

__all__ = ["SparseSpectrum", "spectrum"]

_CHUNK_TERMS = 1 << 22  # expanded (frequency, coefficient) terms summed per sorting pass
_MAX_LEAF_DEPTH = 24  # a leaf this deep alone has 2^24 coefficients; deeper ones are refused


# ----------------------------------------------------------------------------- sparse spectra


@dataclass(frozen=True, eq=False)
class SparseSpectrum:
    """``g(x) = sum_k coefficients[k] * (-1)^<f_k, x>`` on {0,1}^n (see the module docstring)."""

    n: int
    words: np.ndarray  # (K, ceil(n / 64)) uint64, sorted by frequency, no duplicates
    coefficients: np.ndarray  # (K,) float64

    def __post_init__(self):
        if self.words.shape != (len(self.coefficients), n_words(self.n)):
            raise ValueError(
                f"words must have shape (K, {n_words(self.n)}) for n = {self.n}, "
                f"got {self.words.shape} for {len(self.coefficients)} coefficients"
            )

    def __len__(self) -> int:
        return len(self.coefficients)

    @property
    def frequencies(self) -> np.ndarray:
        """Packed MSB-first frequencies: int64 for n <= 63, Python ints (object) above."""
        if self.n <= 63:
            return self.words[:, 0].astype(np.int64)
        shifts = [64 * w for w in range(self.words.shape[1])]
        return np.array(
            [sum(int(word) << s for word, s in zip(row, shifts)) for row in self.words],
            dtype=object,
        )

    @property
    def degrees(self) -> np.ndarray:
        """Hamming weight of each frequency."""
        return popcount(self.words)

    def bits(self, index=slice(None)) -> np.ndarray:
        """(K, n) uint8 matrix of the frequencies' bits, column i = f_i (optionally some rows)."""
        return unpack(self.words[index], self.n)

    def take(self, index) -> SparseSpectrum:
        """The spectrum restricted to some coefficients (an index array or boolean mask)."""
        index = np.sort(np.arange(len(self))[index])  # keep the frequency order
        return SparseSpectrum(self.n, self.words[index], self.coefficients[index])

    def predict(self, x) -> np.ndarray:
        """g on the rows of ``x`` ((N, n) 0/1), float64 of shape (N,)."""
        labels = np.zeros((len(self), 1), dtype=np.int64)
        return self.predict_groups(x, labels, 1)[:, 0, 0]

    def predict_groups(self, x, labels: np.ndarray, n_groups: int) -> np.ndarray:
        """Partial sums of g: ``out[:, o, j]`` sums the coefficients k with ``labels[k, o] == j``.

        One pass over the (N, K) character matrix serves several partitions of the coefficients
        at once (the ablation evaluates every deletion step of both orders this way). Returns
        float64 of shape (N, O, n_groups)."""
        x = pack(_check_inputs(x, self.n))
        labels = np.asarray(labels, dtype=np.int64).reshape(len(self), -1)
        if labels.size and (labels.min() < 0 or labels.max() >= n_groups):
            raise ValueError(
                f"labels must lie in [0, {n_groups}), got {labels.min()}..{labels.max()}"
            )
        n_parts = labels.shape[1]
        out = np.zeros((len(x), n_parts * n_groups))
        block = max(64, (1 << 22) // max(len(x), 1))  # keeps the (N, block) arrays ~32 MB
        columns = labels + np.arange(n_parts) * n_groups
        for start in range(0, len(self), block):
            rows = slice(start, start + block)
            weights = np.zeros((len(self.coefficients[rows]), n_parts * n_groups))
            np.put_along_axis(weights, columns[rows], self.coefficients[rows, None], axis=1)
            # chi_f(x) = 1 - 2 * parity(f & x); the parity of a multi-word AND is the parity
            # of the XOR of its words.
            common = x[:, None, 0] & self.words[None, rows, 0]
            for w in range(1, x.shape[1]):
                common ^= x[:, None, w] & self.words[None, rows, w]
            odd = parity(common).astype(np.float64)
            out += weights.sum(axis=0) - 2.0 * (odd @ weights)
        return out.reshape(len(x), n_parts, n_groups)

    def to_dense(self) -> np.ndarray:
        """All 2^n coefficients in natural order (small n only)."""
        if self.n > 26:
            raise ValueError(f"a dense spectrum needs 2^n entries; n = {self.n} is too large")
        dense = np.zeros(2**self.n)
        dense[self.frequencies] = self.coefficients
        return dense


def _feature_words(features: np.ndarray, n: int) -> np.ndarray:
    """One-bit masks (..., W) uint64 of features (feature i is bit n-1-i)."""
    position = (n - 1 - features).astype(np.uint64)
    word, bit = position // np.uint64(64), position % np.uint64(64)
    one = np.left_shift(np.uint64(1), bit)
    return np.stack([np.where(word == w, one, np.uint64(0)) for w in range(n_words(n))], axis=-1)


def _check_inputs(x, n: int) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != n:
        raise ValueError(
            f"inputs must have shape (N, {n}) to match the spectrum's width n = {n}, got {x.shape}"
        )
    if not np.isin(x, (0, 1)).all():
        raise ValueError("inputs must be 0/1 (binary features); binarize the data first")
    return x.astype(np.uint8)


# ------------------------------------------------------- summing terms in bounded memory


def _sort_order(keys: np.ndarray) -> np.ndarray:
    """The permutation that sorts (M, W) keys by their integer value.

    ``np.sort`` is several times faster than ``argsort`` (SIMD sorting), so when a one-word key
    leaves room, the row index rides along in its low bits and one plain sort does."""
    if keys.shape[1] > 1:
        return np.lexsort(keys.T)  # the last key is the primary one: the most significant word
    index_bits = max(1, (len(keys) - 1).bit_length())
    if int(keys[:, 0].max()).bit_length() + index_bits > 64:
        return np.argsort(keys[:, 0])
    packed = (keys[:, 0] << np.uint64(index_bits)) | np.arange(len(keys), dtype=np.uint64)
    return (np.sort(packed) & np.uint64((1 << index_bits) - 1)).astype(np.intp)


def _group_sum(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort (M, W) keys by their integer value and sum the values of equal keys."""
    if len(keys) == 0:
        return keys, values
    order = _sort_order(keys)
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)])
    return keys[starts], np.add.reduceat(values, starts)


class _Accumulator:
    """Collects (frequency, coefficient) terms and sums equal frequencies in chunks.

    A compaction runs once the pending terms exceed both the chunk size and twice the support
    found so far, so the total sorting work stays proportional to terms * log(terms)."""

    def __init__(self, n_words: int, chunk: int = _CHUNK_TERMS):
        self.keys = [np.zeros((0, n_words), dtype=np.uint64)]
        self.values = [np.zeros(0)]
        self.pending = 0
        self.support = 0
        self.chunk = chunk

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys.append(keys)
        self.values.append(values)
        self.pending += len(values)
        if self.pending > max(self.chunk, 2 * self.support):
            self.compact()

    def compact(self) -> tuple[np.ndarray, np.ndarray]:
        keys, values = _group_sum(np.concatenate(self.keys), np.concatenate(self.values))
        self.keys, self.values = [keys], [values]
        self.pending = self.support = len(values)
        return keys, values


# ------------------------------------------------------------------ trees as leaf paths


def _leaf_paths(nodes: Nodes):
    """For every leaf: the features on its root path and the side taken (0 or 1), padded -1.

    Walks all leaves up at once, one level per step."""
    parent = np.full(len(nodes.feature), -1)
    side = np.zeros(len(nodes.feature), dtype=np.int8)
    for child, s in ((nodes.child0, 0), (nodes.child1, 1)):
        inner = np.flatnonzero(child >= 0)
        parent[child[inner]] = inner
        side[child[inner]] = s
    node = np.flatnonzero(nodes.feature < 0)
    leaves, features, sides = node.copy(), [], []
    while True:
        up = parent[node]
        active = up >= 0
        if not active.any():
            break
        features.append(np.where(active, nodes.feature[np.maximum(up, 0)], -1))
        sides.append(np.where(active, side[node], 0))
        node = np.where(active, up, node)
    shape = (len(leaves), len(features))
    features = np.stack(features, axis=1) if features else np.zeros(shape, dtype=np.int64)
    sides = np.stack(sides, axis=1) if sides else np.zeros(shape, dtype=np.int8)
    return leaves, features, sides


def _distinct_conditions(features: np.ndarray, sides: np.ndarray):
    """Drop repeated features from each path and flag paths no input can follow.

    A feature tested twice on one path is either redundant (same side) or makes the leaf
    unreachable (opposite sides). Scikit-learn and XGBoost never do this on 0/1 data, but the
    transform must stay exact for any tree."""
    repeat = np.zeros(features.shape, dtype=bool)
    reachable = np.ones(len(features), dtype=bool)
    for j in range(1, features.shape[1]):
        same = (features[:, :j] == features[:, j : j + 1]) & (features[:, j : j + 1] >= 0)
        repeat[:, j] = same.any(axis=1)
        reachable &= ~(same & (sides[:, :j] != sides[:, j : j + 1])).any(axis=1)
    features = np.where(repeat, -1, features)
    order = np.argsort(features < 0, axis=1, kind="stable")  # the distinct features first
    return (np.take_along_axis(features, order, 1), np.take_along_axis(sides, order, 1), reachable)


def _expand(features, sides, values, n: int):
    """All 2^d subset terms of L leaves with d distinct features each: ((L 2^d, W), (L 2^d,))."""
    d = features.shape[1]
    masks = _feature_words(features, n)  # (L, d, W)
    signs = 1.0 - 2.0 * sides  # a right turn (x_i = 1) gives (1 - chi_i) / 2
    keys = np.zeros((len(values), 1, masks.shape[2]), dtype=np.uint64)
    coefs = (values * 2.0**-d)[:, None]
    for j in range(d):  # doubling: the subsets without feature j, then with it
        keys = np.concatenate([keys, keys | masks[:, j, None, :]], axis=1)
        coefs = np.concatenate([coefs, coefs * signs[:, j, None]], axis=1)
    return keys.reshape(-1, masks.shape[2]), coefs.reshape(-1)


def _transform(nodes: Nodes, tol: float) -> SparseSpectrum:
    leaves, features, sides = _leaf_paths(nodes)
    features, sides, reachable = _distinct_conditions(features, sides)
    depth = (features >= 0).sum(axis=1)
    if depth.size and depth.max() > _MAX_LEAF_DEPTH:
        raise ValueError(
            f"a leaf tests {depth.max()} distinct features, so it alone has 2^{depth.max()} "
            f"Fourier coefficients; the exact transform supports depth <= {_MAX_LEAF_DEPTH} "
            "(refit with a smaller max_depth)"
        )
    acc = _Accumulator(n_words(nodes.n))
    acc.add(np.zeros((1, n_words(nodes.n)), dtype=np.uint64), np.array([nodes.offset]))
    for d in np.unique(depth[reachable]):
        group = np.flatnonzero(reachable & (depth == d))
        per_chunk = max(1, _CHUNK_TERMS >> d)
        for start in range(0, len(group), per_chunk):
            rows = group[start : start + per_chunk]
            acc.add(
                *_expand(features[rows, :d], sides[rows, :d], nodes.value[leaves[rows]], nodes.n)
            )
    keys, values = acc.compact()
    scale = np.abs(nodes.value).max(initial=0.0) + abs(nodes.offset)
    keep = np.abs(values) > tol * scale  # float sums of terms that cancel exactly
    return SparseSpectrum(nodes.n, keys[keep], values[keep])


def spectrum(model, tol: float = 1e-12) -> SparseSpectrum:
    """The exact sparse Fourier transform of a fitted tree model on 0/1 features.

    ``model``: a scikit-learn ``DecisionTreeRegressor`` / ``RandomForestRegressor`` /
    ``ExtraTreesRegressor``, or an XGBoost ``XGBRegressor`` / ``Booster`` (identity-link
    objective). A forest is the mean of its trees, XGBoost the base score plus the sum of its
    trees. Coefficients whose magnitude is at most ``tol`` times the largest leaf value are
    exact cancellations up to rounding and are dropped (``tol=0`` keeps every non-zero sum).
    """
    return _transform(model_nodes(model), tol)
