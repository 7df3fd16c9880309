"""argparse types the commands share, so a bad number or an unwritable output fails at parse time with
the flag's name, instead of running with a surprising meaning or failing at the end of a long run."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def _int_at_least(text: str, least: int, wanted: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {wanted}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: ``--limit 0`` used to print the default count and ``-3`` all but three."""
    return _int_at_least(text, 1, "a positive integer")


def non_negative_int(text: str) -> int:
    """An argparse type for a count where 0 switches a thing off (``eval args --ir-budget 0``): a negative
    one would mean "every tool over budget", not off."""
    return _int_at_least(text, 0, "0 or a positive integer")


def output_file(text: str) -> str:
    """An argparse type for a file a command writes when it is done (``--json``, ``--cases``, ``--plot``):
    a directory, or a folder that cannot be made or written, fails at once, not after the evaluation or
    benchmark has run for minutes. Missing folders are made when the file is written."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; name a file")
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text}: {folder} is not a folder this user can write")
    return text
