"""The data layer: dataset registry, checksummed download, binarization, splits, synthetic g*,
a job's data. Imports whcore.core only."""
