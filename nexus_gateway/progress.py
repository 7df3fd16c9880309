"""Progress on stderr for long work (ingest, embedding, evaluation); stdout stays the protocol's."""

from __future__ import annotations

import sys


class ProgressPrinter:
    """A one-line progress bar on stderr (a line every 25% when stderr is not a terminal)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.interactive = sys.stderr.isatty()
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // max(total, 1)
        if self.interactive:
            bar = "#" * (percent // 4)
            sys.stderr.write(f"\r{self.label} [{bar:<25}] {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
        elif percent // 25 != self.last // 25 or done == total:
            sys.stderr.write(f"{self.label}: {done}/{total}\n")
        self.last = percent
        sys.stderr.flush()

    def stopped(self, done: int, total: int, why: str) -> None:
        """Work cut short after ``done`` of ``total``: the line says so and ends, so that what is written
        next does not run on after the bar ("compiling tool blocks [#  ] 1/41nexus-gateway: …")."""
        start = "\r" if self.interactive else ""
        sys.stderr.write(f"{start}{self.label}: stopped at {done}/{total} ({why})\n")
        sys.stderr.flush()
