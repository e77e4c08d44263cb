"""whcore: Walsh-Hadamard spectral regularization of neural networks (HashWH and friends).

The stable public API::

    fwht, hadamard_matrix                    the transform and its dense reference
    hashed_inputs, hashwh_penalty, sample_sigma, fullwh_penalty
    MLP                                      the paper's network (optionally stacked seeds)
    train, train_grid, TrainConfig, Data     the training loop (one or a grid of configurations)
"""

__version__ = "0.1.0"

# The names below load on first use (PEP 562), so that commands which never touch PyTorch
# (downloads, figures, baselines) start without importing it.
_LOCATIONS = {
    "fwht": "core.wht",
    "hadamard_matrix": "core.wht",
    "hashed_inputs": "core.hashing",
    "hashwh_penalty": "core.hashing",
    "sample_sigma": "core.hashing",
    "fullwh_penalty": "core.hashing",
    "MLP": "core.models",
    "train": "core.training",
    "train_grid": "core.training",
    "TrainConfig": "core.training",
    "Data": "core.arrays",
}


def __getattr__(name):
    if name in _LOCATIONS:
        import importlib

        return getattr(importlib.import_module(f".{_LOCATIONS[name]}", __name__), name)
    raise AttributeError(f"module 'whcore' has no attribute {name!r}")


__all__ = [
    "MLP",
    "Data",
    "TrainConfig",
    "__version__",
    "fullwh_penalty",
    "fwht",
    "hadamard_matrix",
    "hashed_inputs",
    "hashwh_penalty",
    "sample_sigma",
    "train",
    "train_grid",
]
