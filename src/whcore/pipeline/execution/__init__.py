"""How jobs are run: the settings they take from the environment, the conda environment of `--sdm conda`, and SLURM (start-up checks, orphaned jobs)."""
