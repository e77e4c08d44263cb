"""Which real datasets a validated configuration runs in each mode: the train-size curve, ProteinGym's
supervised protocol, its leaderboard, and those the user gives by file or url. The experiments
that run per dataset (``experiments.EXPERIMENTS``) read their datasets here."""

from __future__ import annotations

from ...data.folds import SCHEMES
from ...data.own_data import source_settings

__all__ = ["curve_datasets", "leaderboard_datasets", "own_datasets", "proteingym_datasets"]


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


def proteingym_datasets(config: dict) -> dict[str, list[str]]:
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
