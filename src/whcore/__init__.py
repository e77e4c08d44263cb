"""whcore: Walsh-Hadamard spectral regularization of neural networks (HashWH and friends).

The stable public API::

    fwht, hadamard_matrix                    the transform and its dense reference
    hashed_inputs, hashwh_penalty, sample_sigma, fullwh_penalty
    MLP                                      the paper's network (optionally stacked seeds)
    train, TrainConfig, Data                 the training loop and its inputs
"""

__version__ = "0.1.0"

from .hashing import fullwh_penalty, hashed_inputs, hashwh_penalty, sample_sigma
from .models import MLP
from .training import Data, TrainConfig, train
from .wht import fwht, hadamard_matrix

__all__ = [
    "__version__",
    "fwht",
    "hadamard_matrix",
    "hashed_inputs",
    "hashwh_penalty",
    "sample_sigma",
    "fullwh_penalty",
    "MLP",
    "train",
    "TrainConfig",
    "Data",
]
