"""The parts of ``benchmarks/run.py``, one module per thing measured.

``common`` holds what every part shares: where the repository and the data are, the
interleaved timing, ratios and medians, the allocation counter, and the summary table. Each part
module has ``measure(device, quick, reps)``, the entries it adds to the run's JSON, and
``table(result)``, its rows of the summary table.
"""
