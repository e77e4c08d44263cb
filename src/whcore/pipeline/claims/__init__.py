"""The paper's claims, checked against the measured tables.

Each claim quotes the paper's sentence, states how it is checked here, and gets a verdict
(holds / does not hold / inconclusive) with its effect, uncertainty and number of independent
units, computed the same way at any scale; thresholds are stated and never tuned to results.
Statistics: units and their paired tests per cell (``claims.cells``), the rules from cells to a
verdict (``claims.verdicts``), a claim assembled from them (``claims.claim``), power
(``claims.power``). The engine is handed its groups of claims (``ClaimGroup``, one per
experiment: ``whcore.pipeline.experiments.claim_groups()``); it lists no experiment."""

from .claim import Claim
from .dynamics import cross_seed_rise
from .exact import ablation_claims, entacmaea_claims
from .hashing import hashing_claims
from .levels import ALPHA, FAILS, HOLDS, MIN_UNITS, SKIPPED, UNSURE
from .power import claim_power, units_needed
from .real import real_claims
from .report import IDENTITIES, ClaimGroup, evaluate_claims, write_claims
from .spectrum import spectrum_claims
from .spectrum_reads import TABLE as _SPECTRUM_EPOCHS
from .spectrum_reads import read_values as _spectrum_reads
from .speed import speed_claim
from .synthetic import synthetic_claims
from .verdicts import holm

# The tables whose reads the claims state value by value (a table's file stem -> a function of
# the table giving which of its values the claims read): a slim crate keeps those values only.
CLAIM_READS = {_SPECTRUM_EPOCHS: _spectrum_reads}

__all__ = [
    "ALPHA",
    "CLAIM_READS",
    "FAILS",
    "HOLDS",
    "MIN_UNITS",
    "SKIPPED",
    "UNSURE",
    "IDENTITIES",
    "Claim",
    "ClaimGroup",
    "ablation_claims",
    "claim_power",
    "cross_seed_rise",
    "entacmaea_claims",
    "evaluate_claims",
    "hashing_claims",
    "holm",
    "real_claims",
    "speed_claim",
    "spectrum_claims",
    "synthetic_claims",
    "units_needed",
    "write_claims",
]
