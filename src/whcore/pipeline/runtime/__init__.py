"""Where a run's files live and how they are written: the layout, canonical JSON, the guards on every write, the run record and the provenance of every output."""
