"""The HashWH library: transform, hashing, regularizers, SPRIGHT, EN-S, the MLP, the
training loop, exact spectra, tree spectra. Imports nothing from whcore.data or whcore.pipeline."""
