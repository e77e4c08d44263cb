"""How jobs run: the settings they take from the environment (never from their spec), the conda
environment of `--sdm conda`, SLURM (start-up checks, jobs a killed Snakemake left), and the GPU
each job claims for itself."""
