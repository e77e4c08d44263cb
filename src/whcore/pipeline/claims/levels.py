"""The verdicts and the fixed levels every claim is judged at (docs/fidelity.md, "Margins and
thresholds", gives each its reason and the commit that set it)."""

HOLDS, FAILS, UNSURE, SKIPPED = "holds", "does not hold", "inconclusive", "not evaluated"
ALPHA = 0.05  # error level of a claim's test, each side (and of all claims together)
MIN_UNITS = 3  # fewer finished units in a cell: no verdict for it
POWER = 0.8  # the power the "units needed" estimate aims at
NEARLY_ALL = 0.8  # "nearly all" / "almost always": this share of the cells, none worse
INTEREST_SD = 1.0  # the stated effect of interest: this many SDs of a cell's unit differences
