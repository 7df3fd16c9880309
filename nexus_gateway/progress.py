"""Progress on stderr for long work (ingest, embedding, evaluation); stdout stays the protocol's."""

from __future__ import annotations

import sys
from collections.abc import Callable


def progress_printer(label: str) -> Callable[[int, int], None]:
    """A one-line progress bar on stderr (a line every 25% when stderr is not a terminal)."""
    interactive = sys.stderr.isatty()
    last = [-1]

    def report(done: int, total: int) -> None:
        percent = 100 * done // max(total, 1)
        if interactive:
            bar = "#" * (percent // 4)
            sys.stderr.write(f"\r{label} [{bar:<25}] {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
        elif percent // 25 != last[0] // 25 or done == total:
            sys.stderr.write(f"{label}: {done}/{total}\n")
        last[0] = percent
        sys.stderr.flush()

    return report
