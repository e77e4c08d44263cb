"""Residues at every site -> binary features, every feature 0 in the wild type (``encode``), for
a user's table (``whcore.data.own_data``) and for a ProteinGym table's full sequences
(``sequence_features``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .formats import MUTANT_TOKEN, WILD_TYPE_MUTANTS

__all__ = ["MUTATED", "encode", "sequence_features"]

MUTATED = "mutated"  # the residue name of a site's mutated indicator (``site39=mutated``)


def encode(residues: np.ndarray, wt: np.ndarray, sites: np.ndarray, how: str) -> pd.DataFrame:
    """Residues at every site -> the binary features of the variable sites, every feature 0 in
    the wild type: ``mutated``, one indicator per site (``site39``: differs from the wild type);
    ``onehot``, that indicator (``site39=mutated``) and one column per other residue seen
    (``site39=A``).

    Why not the wild-type residue's own column: in a table of few mutations per row it is 1 in
    almost every row, so a network's first layer sees a near-constant input of the size of
    every other input together, and what the network can learn is decided by those columns
    (on avGFP's singles the standard network ranked nothing, docs/leaderboard.md). Its
    complement, the mutated indicator, spans the same functions with a bias (a linear model
    or ridge with an unpenalized intercept is unchanged), keeps the inputs on the binary cube
    (HashWH's penalty reads the network there), and changes the Walsh-Hadamard spectrum by
    signs only (flipping bit i multiplies G(f) by -1 where f_i = 1), so every energy is the
    same."""
    columns: dict[str, np.ndarray] = {}
    for k, site in enumerate(sites):
        seen = np.unique(residues[:, k])
        if len(seen) < 2:
            continue  # not variable: carries no information
        mutated = residues[:, k] != wt[k]
        if how == "mutated":
            columns[f"site{site}"] = mutated
            continue
        if wt[k] in seen:  # else every row is mutated there: a constant column
            columns[f"site{site}={MUTATED}"] = mutated
        for residue in seen[seen != wt[k]]:
            columns[f"site{site}={residue}"] = residues[:, k] == residue
    return pd.DataFrame(columns, index=range(len(residues))).astype(np.uint8)


def sequence_features(mutants, sequences) -> pd.DataFrame:
    """The ``onehot`` features (``encode``) of the full sequences of a ProteinGym table, the
    wild type being the first sequence with every site a mutant names set back to the residue
    the mutant says it had; sites are positions from 1."""
    sequences = [str(s).upper() for s in sequences]
    length = len(sequences[0])
    wild = list(sequences[0])
    for row, text in enumerate(mutants):
        if str(text).strip().lower() in WILD_TYPE_MUTANTS:
            continue
        for token in str(text).split(":"):
            match = MUTANT_TOKEN.fullmatch(token.strip())
            if match is None or int(match.group(2)) > length:
                raise ValueError(
                    f"mutant {text!r} of row {row + 1} is not a substitution within the "
                    f"{length} residues of mutated_sequence. Fix: write mutants like 'A1P:D2N'"
                )
            wild[int(match.group(2)) - 1] = match.group(1)
    if any(len(s) != length for s in sequences):
        raise ValueError(
            "mutated_sequence: the sequences have different lengths. Fix: give substitutions "
            "of one target sequence"
        )
    residues = np.array([list(s) for s in sequences], dtype="<U1")
    return encode(residues, np.array(wild, dtype="<U1"), np.arange(1, length + 1), "onehot")
