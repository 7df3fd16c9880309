"""The ``.atb`` file: one tool schema compiled to KV rows, read back by ``mmap``.

Layout (little-endian; docs/atb-format.md has the full table)::

    0       128-byte header (HEADER below), the sections' offsets in it
    4 KiB   token ids, int32 [n_tokens]
    …       K, float16 [n_layer, n_tokens, n_head_kv·head_dim]          (next 4 KiB boundary)
    …       V, float16 [n_layer, n_tokens, n_embd_v] (rows) or [n_layer, n_embd_v, n_tokens] (v_trans)

Sections start on page boundaries, so no section shares a page with another and every array view is
aligned. Version 1 put them on 2 MiB boundaries for huge pages; a file mapping gets none on the usual
file systems, and the gaps made an IR block of ~0.33 MB a 6.4 MB file wherever holes are not kept (a
copy, an archive, a file system without sparse files). The reader takes the offsets from the header,
so it reads both versions. The checksum (CRC-32 of the header with the checksum field zeroed, then the
three sections) catches truncation and corruption; a file that fails it is deleted by the caller and
compiled again.

A block depends on the model (``fingerprint``), its RoPE, the cache types and V layout of the context
that compiled it, and on the text before it (``anchor``: a hash of the prefix tokens it was compiled
after, at position ``m0``). :func:`check_compatible` compares all of it with the live engine before a
splice; any difference is a :class:`BlockMismatch` naming the field, and the caller prefills instead.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import zlib
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from .kv_state import KvGeometry

MAGIC = b"NATB"
VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: the same fields, sections on 2 MiB boundaries
HEADER_SIZE = 128
SECTION_ALIGN = 4096
# magic, version, header size, model fingerprint, anchor, n_layer, n_head_kv, head_dim, n_rot,
# rope type, freq base, freq scale, YaRN ext/attn/beta fast/beta slow, YaRN original context,
# m0, n_tokens, k type, v type, v_trans, pad, tokens/K/V offsets, checksum, reserved
HEADER = struct.Struct("<4sHH16s16sIIIIiffffffIIIBBBxIIIQ8x")
assert HEADER.size == HEADER_SIZE


class BlockError(Exception):
    """Base of block problems; the caller prefills instead of splicing."""


class BlockCorrupt(BlockError):
    """Truncated or altered file (checksum, size or magic): delete and recompile."""


class BlockMismatch(BlockError):
    """A sound block compiled under another model, RoPE, cache layout or prefix."""


def anchor_of(prefix_tokens: list[int]) -> bytes:
    """What a block's values depend on besides the model: the exact tokens before it."""
    return hashlib.blake2b(np.asarray(prefix_tokens, dtype=np.int32).tobytes(), digest_size=16).digest()


@dataclass(frozen=True)
class BlockHeader:
    geometry: KvGeometry
    anchor: bytes
    m0: int
    n_tokens: int


@dataclass
class Block:
    """A loaded block: ``k``/``v`` are views of the mapping (read-only) or of arrays compiled in memory."""

    header: BlockHeader
    tokens: np.ndarray
    k: np.ndarray
    v: np.ndarray
    owned: bool = False  # a private copy (from the arena): the splice may rotate its keys in place

    @property
    def nbytes(self) -> int:
        return int(self.k.nbytes + self.v.nbytes)


def leading(block: Block, n_tokens: int) -> Block:
    """The block's first ``n_tokens`` cells, as a block of their own: attention is causal, so a cell
    depends only on the cells before it, and the head of a block is exactly the block of the text that
    begins it. A tool's block holds its form and the label that follows it ("Request:"); a turn that
    shows earlier turns between the two splices the form alone from the same block."""
    if not 0 < n_tokens <= block.header.n_tokens:
        raise ValueError(f"a block of {block.header.n_tokens} tokens has no head of {n_tokens}")
    if n_tokens == block.header.n_tokens:
        return block
    v = block.v[:, :, :n_tokens] if block.header.geometry.v_trans else block.v[:, :n_tokens]
    # copies: contiguous, and a splice may rotate its keys in place
    return Block(
        replace(block.header, n_tokens=n_tokens),
        block.tokens[:n_tokens].copy(),
        np.array(block.k[:, :n_tokens], order="C"),
        np.array(v, order="C"),
        owned=True,
    )


def _align(offset: int, align: int) -> int:
    return -(-offset // align) * align


def _section_bytes(header: BlockHeader) -> tuple[int, int, int]:
    """Bytes of the token, K and V sections."""
    g, n = header.geometry, header.n_tokens
    kv_bytes = g.n_layer * n * g.n_embd_k * 2  # n_embd_v == n_embd_k for every model the splice supports
    return 4 * n, kv_bytes, kv_bytes


def _layout(header: BlockHeader, align: int = SECTION_ALIGN) -> tuple[int, int, int]:
    """Where the writer puts the token, K and V sections: each on the next multiple of ``align``."""
    tokens_bytes, k_bytes, _ = _section_bytes(header)
    tokens_at = _align(HEADER_SIZE, align)
    k_at = _align(tokens_at + tokens_bytes, align)
    return tokens_at, k_at, _align(k_at + k_bytes, align)


# The header holds the geometry's fields in KvGeometry's order, split around the anchor and m0/n_tokens:
# fingerprint | anchor | n_layer … yarn_orig_ctx (12) | m0, n_tokens | k_type, v_type, v_trans.
_MIDDLE = slice(1, 13)
_CACHE = slice(13, 16)


def _pack(header: BlockHeader, offsets: tuple[int, int, int], checksum: int, version: int = VERSION) -> bytes:
    g = astuple(header.geometry)
    tokens_at, k_at, v_at = offsets
    k_type, v_type, v_trans = g[_CACHE]
    return HEADER.pack(
        MAGIC,
        version,
        HEADER_SIZE,
        g[0],
        header.anchor,
        *g[_MIDDLE],
        header.m0,
        header.n_tokens,
        k_type,
        v_type,
        int(v_trans),
        tokens_at,
        k_at,
        v_at,
        checksum,
    )


def _checksum(
    header: BlockHeader,
    offsets: tuple[int, int, int],
    sections: tuple[bytes | memoryview, bytes | memoryview, bytes | memoryview],
    version: int = VERSION,
) -> int:
    crc = zlib.crc32(_pack(header, offsets, 0, version))
    for section in sections:
        crc = zlib.crc32(section, crc)
    return crc


def write_block(path: Path, block: Block, align: int = SECTION_ALIGN) -> None:
    """Write atomically (temporary file, then rename): a crash never leaves half a block under the name.

    ``align`` is where sections start (a multiple of 64); the default page keeps a file as small as its
    data. ``bench/block_files.py`` writes version 1's 2 MiB layout with it to compare the two."""
    if align % 64:
        raise ValueError(f"section alignment {align} is not a multiple of 64")
    header = block.header
    tokens = np.ascontiguousarray(block.tokens, dtype=np.int32).tobytes()
    k = np.ascontiguousarray(block.k, dtype=np.float16).tobytes()
    v = np.ascontiguousarray(block.v, dtype=np.float16).tobytes()
    if (len(tokens), len(k), len(v)) != _section_bytes(header):
        raise ValueError("token, K or V array does not match the header's shape")
    offsets = _layout(header, align)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(_pack(header, offsets, _checksum(header, offsets, (tokens, k, v))))
            for offset, data in zip(offsets, (tokens, k, v), strict=True):
                out.seek(offset)
                out.write(data)
        os.replace(temporary, path)
    except BaseException:  # a full disk: no half-written temporary file left behind either
        temporary.unlink(missing_ok=True)
        raise


def _header_from(raw: tuple[Any, ...]) -> tuple[BlockHeader, tuple[int, int, int], int]:
    fingerprint, anchor, middle = raw[3], raw[4], raw[5:17]
    m0, n_tokens, k_type, v_type, v_trans = raw[17:22]
    values: tuple[Any, ...] = (fingerprint, *middle, k_type, v_type, bool(v_trans))
    geometry = KvGeometry(*values)
    return BlockHeader(geometry, anchor, m0, n_tokens), (raw[22], raw[23], raw[24]), raw[25]


def _sections_fit(offsets: tuple[int, int, int], sizes: tuple[int, int, int]) -> bool:
    """Sections after the header, in order, apart and aligned for their arrays' views."""
    end = HEADER_SIZE
    for offset, size in zip(offsets, sizes, strict=True):
        if offset < end or offset % 64:
            return False
        end = offset + size
    return True


def read_block(path: Path) -> Block:
    """Map the file, check magic, version, size and checksum; the arrays are read-only views of the map."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < HEADER_SIZE:
            raise BlockCorrupt(f"{path.name}: {size} bytes, shorter than the header")
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    raw = HEADER.unpack_from(mapping, 0)
    if raw[0] != MAGIC or raw[2] != HEADER_SIZE:
        raise BlockCorrupt(f"{path.name}: not an .atb file")
    if raw[1] not in READABLE_VERSIONS:
        raise BlockMismatch(f"{path.name}: .atb version {raw[1]}, this build reads {READABLE_VERSIONS}")
    header, offsets, checksum = _header_from(raw)
    sizes = _section_bytes(header)
    if not _sections_fit(offsets, sizes):
        raise BlockCorrupt(f"{path.name}: section offsets {offsets} overlap or are misaligned")
    end = offsets[2] + sizes[2]
    if size < end:
        raise BlockCorrupt(f"{path.name}: truncated ({size} of {end} bytes)")
    view = memoryview(mapping)
    tokens, k, v = (view[offset : offset + n] for offset, n in zip(offsets, sizes, strict=True))
    if _checksum(header, offsets, (tokens, k, v), raw[1]) != checksum:
        raise BlockCorrupt(f"{path.name}: checksum mismatch")
    g, n = header.geometry, header.n_tokens
    v_shape = (g.n_layer, g.n_embd_k, n) if g.v_trans else (g.n_layer, n, g.n_embd_k)
    return Block(
        header,
        np.frombuffer(tokens, dtype=np.int32),
        np.frombuffer(k, dtype=np.float16).reshape(g.n_layer, n, g.n_embd_k),
        np.frombuffer(v, dtype=np.float16).reshape(v_shape),
    )


def check_compatible(header: BlockHeader, live: KvGeometry, anchor: bytes) -> None:
    """Raise :class:`BlockMismatch` naming the first field where the block and the live context differ."""
    for field in fields(KvGeometry):
        ours, theirs = getattr(header.geometry, field.name), getattr(live, field.name)
        same = np.float32(ours) == np.float32(theirs) if isinstance(ours, float) else ours == theirs
        if not same:
            if field.name == "fingerprint":
                raise BlockMismatch(f"block compiled for another model ({ours.hex()[:12]} vs live {theirs.hex()[:12]})")
            raise BlockMismatch(f"block compiled for another {field.name} ({ours!r} vs live {theirs!r})")
    if header.anchor != anchor:
        raise BlockMismatch("block compiled after another prefix (the system prompt changed)")
