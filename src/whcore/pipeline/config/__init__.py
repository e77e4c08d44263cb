"""The workflow configuration: its schema (``schema``: the file, shipped as package data, and its
part generated from the registries), its validation (``validation``: the schema's defaults
filled in, then the checks a schema cannot express), and what the plan (``contract``) reads of a
validated one here: the datasets of the epistasis analysis and the settings of a real dataset
with its experiment's defaults merged in (the datasets of each mode: ``experiments.datasets``).
A configuration that cannot run is a ``ConfigError``."""

from __future__ import annotations

from ..experiments.datasets import curve_datasets, own_datasets

__all__ = ["ConfigError", "dataset_settings", "epistasis_datasets"]


def _merge(base: dict, override: dict | None) -> dict:
    return {**base, **(override or {})}


def epistasis_datasets(config: dict) -> list[str]:
    """The datasets the epistasis analysis reads: ``epistasis.datasets``, else every one of the
    user's own that runs the curve (the analysis reads its largest train size)."""
    names = config["epistasis"]["datasets"]
    curves = curve_datasets(config)
    return [n for n in own_datasets(config) if n in curves] if names is None else names


def dataset_settings(config: dict, name: str) -> dict:
    """A real dataset's settings with the experiment-level defaults merged in."""
    real = config["real"]
    ds = real["datasets"][name]
    return {
        **ds,
        "training": _merge(real["training"], ds.get("training")),
        "methods": _merge(real["methods"], ds.get("methods")),
        "baselines": _merge(real["baselines"], ds.get("baselines")),
    }


class ConfigError(ValueError):
    """A configuration that cannot be run; the message names the key, the value and the fix."""
