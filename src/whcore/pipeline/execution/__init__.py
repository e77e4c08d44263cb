"""How jobs run: the settings they take from the environment (never from their spec), the conda
environment of `--sdm conda`, and SLURM (start-up checks, jobs a killed Snakemake left)."""
