"""The torch device a training run uses as a library: "auto" is CUDA where present. A job of
the workflow claims a GPU of its own instead (``whcore.pipeline.execution.gpus``)."""

from __future__ import annotations

import torch

__all__ = ["pick_device"]


def _cuda_available() -> bool:
    return torch.cuda.is_available()


def pick_device(requested: str = "auto") -> torch.device:
    """The torch device for "auto" (CUDA when present, its current device), "cpu", "cuda" or
    "cuda:K", claiming nothing (the training loop's choice when used as a library)."""
    if requested == "cpu":
        return torch.device("cpu")
    if requested not in ("auto", "cuda") and not requested.startswith("cuda:"):
        raise ValueError(f"unknown device {requested!r}: use 'auto', 'cpu', 'cuda' or 'cuda:K'")
    if not _cuda_available():
        if requested == "auto":
            return torch.device("cpu")
        raise ValueError(f"device {requested!r} was requested but CUDA is not available")
    return torch.device("cuda" if requested == "auto" else requested)
