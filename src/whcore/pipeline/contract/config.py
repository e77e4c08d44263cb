"""The workflow configuration as the plan reads it once validated (``contract.validation``):
the datasets of each mode and the settings of a real dataset with its experiment's defaults
merged in. A configuration that cannot run is a ``ConfigError``."""

from __future__ import annotations

from ...data.folds import SCHEMES
from ...data.own_data import source_settings

__all__ = [
    "ConfigError",
    "dataset_settings",
    "curve_datasets",
    "epistasis_datasets",
    "leaderboard_datasets",
    "protocol_datasets",
    "own_datasets",
]


def _merge(base: dict, override: dict | None) -> dict:
    return {**base, **(override or {})}


def own_datasets(config: dict) -> dict[str, dict]:
    """The real datasets a config gives by file or url: {name: source settings}."""
    return {
        name: source_settings(entry)
        for name, entry in config["real"].get("datasets", {}).items()
        if "file" in entry or "url" in entry
    }


def _datasets_under(config: dict, protocol: str) -> dict[str, list[str]]:
    """The real datasets whose ``protocol`` key is ``protocol``, when the real experiment is on:
    {name: their split schemes (the ``folds`` key, default every scheme)}."""
    real = config["real"]
    if not real["enabled"]:
        return {}
    return {
        name: list(entry.get("folds") or SCHEMES)
        for name, entry in real.get("datasets", {}).items()
        if entry.get("protocol") == protocol
    }


def protocol_datasets(config: dict) -> dict[str, list[str]]:
    """The real datasets run under ProteinGym's supervised protocol (``protocol: proteingym``):
    {name: their split schemes}."""
    return _datasets_under(config, "proteingym")


def leaderboard_datasets(config: dict) -> dict[str, list[str]]:
    """The real datasets scored as ProteinGym's supervised leaderboard scores an assay
    (``protocol: leaderboard``): {name: their split schemes}."""
    return _datasets_under(config, "leaderboard")


def curve_datasets(config: dict) -> list[str]:
    """The real datasets that run the train-size curve: all but those of ProteinGym's protocol
    given without ``train_sizes`` (the protocol alone)."""
    return [name for name, entry in config["real"]["datasets"].items() if "train_sizes" in entry]


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
