"""Canonical form: one spelling for equal settings.

A spec is compared, stored and passed as canonical JSON (integral numbers as integers, keys
sorted), so that equal settings written differently give one job.
"""

from __future__ import annotations

import json

__all__ = ["canonical", "canonical_json"]


def canonical(value):
    """``value`` with integral floats as ints (``4.0`` -> ``4``) and mappings' keys sorted, so
    that equal settings written differently give one spec."""
    if isinstance(value, dict):
        return {str(k): canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)  # (beyond 2^53 a float is no count: 1e300 stays 1e+300)
    return value


def canonical_json(value) -> str:
    return json.dumps(canonical(value), sort_keys=True, separators=(",", ":"))
