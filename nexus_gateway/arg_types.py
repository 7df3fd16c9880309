"""argparse types the commands share, so a bad number fails at parse time with the flag's name instead
of running with a surprising meaning."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse type: ``--limit 0`` used to print the default count and ``-3`` all but three."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value
