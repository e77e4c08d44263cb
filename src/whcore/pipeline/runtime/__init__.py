"""Where a run's files live and how they are written: the layout, canonical JSON, untrusted YAML
read within bounds, the guards on every write, the run record and the provenance of every
output. The lowest of the pipeline's folders: it imports none of them."""
