"""The one list of network methods: each method's parameters, defaults, limits, label, colour
and the module implementing it.

Kept free of heavy imports: the workflow's schema, wildcard constraints, the aggregation's
hyperparameter columns and the figures' palette are all derived from it. A regularizer class
(a ``whcore.core.regularizers.Regularizer`` subclass in the entry's ``module``) takes its
parameters from here by its name and registers itself by subclassing: adding a method is its
entry here and its class there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "MAX_EXACT_N",
    "MethodInfo",
    "METHOD_INFO",
    "PRECISIONS",
    "configuration_schema",
    "hyperparameter_names",
    "value_schema",
]

# The arithmetic a training run may use (training.precision): fp32, or the opt-in TF32 matrix
# products on CUDA or bfloat16 autocast. Kept here, free of heavy imports, so that the config
# schema and the job spec validate against the same list as the training loop.
PRECISIONS = ("fp32", "tf32", "bf16")

# The largest n whose 2^n inputs an exact spectrum (and FullWH's penalty) evaluates.
MAX_EXACT_N = 20


@dataclass(frozen=True)
class MethodInfo:
    params: dict[str, type]  # parameter name -> type; all required unless in defaults
    defaults: dict[str, object] = field(default_factory=dict)
    label: str = ""
    color: str = "#000000"
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)  # of str parameters
    # Weights that may differ between the members of one stacked model (one training job
    # trains every value of these together); the other parameters shape the computation.
    per_member: tuple[str, ...] = ()
    max_n: int | None = None  # the largest input dimension it can train on (None: any)
    module: str = "whcore.core.regularizers"  # where its Regularizer subclass lives


METHOD_INFO: dict[str, MethodInfo] = {
    "standard": MethodInfo({}, label="Standard", color="#4d4d4d"),
    # FullWH evaluates the network on all 2^n inputs.
    "fullwh": MethodInfo(
        {"lam": float}, label="FullWH", color="#1b9e77", per_member=("lam",), max_n=MAX_EXACT_N
    ),
    # decoder: SPRIGHT as its paper specifies ("robust") or as the EN-S authors' code ran it
    # ("reference": detection and least squares, no noise threshold, no peeling)
    "ens": MethodInfo(
        {"lam": float, "rho": float, "m": int, "d": int, "decoder": str},
        {"d": 3, "decoder": "robust"},
        "EN-S",
        "#d95f02",
        {"decoder": ("robust", "reference")},
        per_member=("lam", "rho"),
        module="whcore.core.ens",
    ),
    "hashwh": MethodInfo(
        {"lam": float, "b": int, "repetitions": int},
        {"repetitions": 1},
        "HashWH",
        "#7570b3",
        per_member=("lam",),
    ),
}


def hyperparameter_names() -> tuple[str, ...]:
    """Every network method's parameter names, in a stable order."""
    names: list[str] = []
    for info in METHOD_INFO.values():
        names += [p for p in info.params if p not in names]
    return tuple(names)


def value_schema(method: str, param: str) -> dict:
    """The JSON schema of one value of a method's parameter: a choice, an integer >= 1 or a
    number >= 0 (NaN and infinity pass a JSON-schema bound: callers refuse them)."""
    info = METHOD_INFO[method]
    kind = info.params[param]
    if kind is str:
        return {"enum": list(info.choices[param])}
    if kind is int:
        return {"type": "integer", "minimum": 1}
    return {"type": "number", "minimum": 0}


def configuration_schema(method: str) -> dict:
    """The JSON schema of one configuration of ``method`` (a job spec's params)."""
    info = METHOD_INFO[method]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [param for param in info.params if param not in info.defaults],
        "properties": {param: value_schema(method, param) for param in info.params},
    }
