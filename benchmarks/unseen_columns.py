"""How often the paper's real-data splits hold a test row that differs from every training row
in a column constant over the training rows (a substitution, letter or site no training row
has): where a network would meet a first-layer weight still at its random start.

    python benchmarks/unseen_columns.py [--datasets entacmaea sgemm gb1 avgfp] [--seeds 5]
        [--data-dir <folder>] [--mirror <raw folder>]

For each dataset and train size of config/config.yaml (the paper's), over the first ``--seeds``
data seeds of the paper's split (``whcore.data.datasets.split``): the share of test rows with
such a column, and the number of such columns (median over seeds). No training: a count over
the binarized tables (binarized into ``--data-dir``, default a temporary folder). Not run by the
tests. The leaderboard mode and the whole-table protocol fit their networks on the varying
columns only (``whcore.core.arrays.varying_columns``); the paper's experiment keeps the
authors' inputs, so this is the size of what that choice leaves in its numbers.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np
import yaml

from whcore.core.arrays import varying_columns
from whcore.data import datasets

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"


def unseen(x: np.ndarray, train: np.ndarray, test: np.ndarray) -> tuple[float, int]:
    """(share of test rows differing from the training rows in a column constant over them,
    the number of such columns)."""
    constant = ~varying_columns(x[train])
    reference = x[train[0], constant]
    differs = x[test][:, constant] != reference
    return float(differs.any(axis=1).mean()), int(differs.any(axis=0).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(datasets.REGISTRY))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--mirror", default=os.environ.get("WHCORE_DATA_MIRROR", "../shared/datasets/raw")
    )
    args = parser.parse_args()
    sizes = {
        name: entry["train_sizes"]
        for name, entry in yaml.safe_load(CONFIG.read_text())["real"]["datasets"].items()
    }
    with tempfile.TemporaryDirectory() as scratch:
        root = args.data_dir or scratch
        print(
            "| dataset | train size | test rows with an unseen column: median share over "
            "seeds [min, max] | such columns (median) |"
        )
        print("|---|---|---|---|")
        for name in args.datasets:
            table = datasets.load(name, root, args.mirror)
            x = table.drop(columns="y").to_numpy()
            for size in sizes[name]:
                found = [
                    unseen(x, s.train, s.test)
                    for s in (datasets.split(name, size, seed) for seed in range(args.seeds))
                ]
                shares = np.array([share for share, _ in found])
                columns = np.median([count for _, count in found])
                print(
                    f"| {name} | {size} | {np.median(shares):.3f} [{shares.min():.3f}, "
                    f"{shares.max():.3f}] | {columns:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
