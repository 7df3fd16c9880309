"""Process helpers shared by the benchmarks and the tests: free ports and waiting for a listener."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None, timeout: float = 60) -> None:
    """Block until something listens on 127.0.0.1:port; fail early if ``process`` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening on {port}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on {port} after {timeout}s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate, wait a little, kill if it will not go."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def start(command: list[str], port: int, env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen[bytes]:
    """Start a server and return once it listens on ``port`` (stdin closed, environment extended)."""
    process = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL, **popen)
    try:
        wait_for_port(port, process)
    except BaseException:
        stop(process)
        raise
    return process


@contextmanager
def running(
    command: list[str], port: int, env: dict[str, str] | None = None, **popen: Any
) -> Iterator[subprocess.Popen[bytes]]:
    process = start(command, port, env, **popen)
    try:
        yield process
    finally:
        stop(process)


def gateway_command(config: Path, *flags: str) -> list[str]:
    """``python -m nexus_gateway serve --config CONFIG FLAGS…`` with this interpreter."""
    return [sys.executable, "-m", "nexus_gateway", "serve", "--config", str(config), *flags]
