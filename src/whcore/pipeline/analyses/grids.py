"""A method's grid of configurations: its points, the path-safe tag that names each (and the
file of its records), and the groups of points one training job trains together.
"""

from __future__ import annotations

import itertools

from ...core.methods import METHOD_INFO
from ..runtime.canonical import canonical

__all__ = ["method_grid", "param_tag", "training_groups"]


def param_tag(params: dict) -> str:
    """A path-safe, readable name for a hyperparameter point: b7_lam0.01. ``repr`` of a float
    round-trips, so two different values never share a tag."""
    if not params:
        return "default"
    return "_".join(f"{key}{_tag_value(value)}" for key, value in sorted(params.items()))


def _tag_value(value) -> str:
    return value if isinstance(value, str) else repr(canonical(value))


def method_grid(methods: dict) -> list[tuple[str, dict]]:
    """{method: {param: [values]}} -> [(method, {param: value})] over the cartesian product.
    A value equal to the method's default is left out, so writing a default out names the same
    job as leaving it implicit."""
    points = []
    for method, grid in methods.items():
        defaults = canonical(METHOD_INFO[method].defaults)
        keys = sorted(grid or {})
        for values in itertools.product(*(grid[k] for k in keys)):
            params = canonical(dict(zip(keys, values)))
            explicit = {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}
            points.append((method, explicit))
    return points


def training_groups(methods: dict) -> list[tuple[str, str, list[dict]]]:
    """The configurations of ``method_grid`` in groups one job trains together: [(method,
    group tag, [params])], a group holding the configurations that differ only in the weights
    stacked members may differ in (``MethodInfo.per_member``: lam, rho)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for method, params in method_grid(methods):
        shared = {k: v for k, v in params.items() if k not in METHOD_INFO[method].per_member}
        groups.setdefault((method, param_tag(shared)), []).append(params)
    return [(method, tag, grid) for (method, tag), grid in groups.items()]
