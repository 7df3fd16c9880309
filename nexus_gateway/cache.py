"""On-disk registry cache: checksummed files written atomically.

Layout under the cache folder (``$NEXUS_CACHE_DIR``, ``nexus.cache_dir``, else ``registry_cache/`` in a
source checkout and the user's cache folder, ``~/.cache/nexus-gateway/registry``, for an installed
package, whose own folder may not be writable)::

    tools/<sha256 of canonical schema JSON>.json   one ingested tool
    tools/<key>.<embedder tag>.vec                 its embedding (vectors.py)
    tools/<key>[.ir-<digest>].<tag>.atb            its compiled KV blocks (block_store.py, atb.py)
    servers/<server>.json                          the keys of a server's last known tool list
    journal.jsonl                                  the call journal (journal.py)
    auth/<server>-<url hash>.json                  OAuth tokens stored by ``nexus-gateway login`` (oauth.py)
    pins.json                                      tool definitions pinned on first sight (pins.py)
    pins.json.lock                                 held while a process updates pins.json (``updating``)

A tool's files are named by what they depend on (a changed schema, IR rendering, model or system
prompt gets new names), so old ones stay behind; ``cache_survey.py`` finds the stale ones
(``nexus-gateway cache --prune``).

Every JSON and vector file starts with the line ``NEXUS1 <sha256 of the rest>``. A file that is
truncated, edited or otherwise fails the check raises :class:`CacheCorrupt` inside this module; callers
see ``None`` (a miss), the bad file is removed and a warning is logged, so the entry is simply rebuilt.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from filelock import FileLock, Timeout

from .exceptions import CacheCorrupt

logger = logging.getLogger(__name__)

MAGIC = b"NEXUS1 "
CHECKOUT = Path(__file__).resolve().parent.parent  # the repository, when running from a source checkout


def canonical_json(value: Any) -> bytes:
    """Key-sorted compact JSON, so equal schemas always hash alike."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def schema_key(tool: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a tool's name, description and schemas."""
    subject = {k: tool.get(k) for k in ("name", "description", "inputSchema", "outputSchema")}
    return hashlib.sha256(canonical_json(subject)).hexdigest()


def default_cache_dir() -> Path:
    if os.environ.get("NEXUS_CACHE_DIR"):
        return Path(os.environ["NEXUS_CACHE_DIR"])
    if (CHECKOUT / "pyproject.toml").is_file():  # a source checkout (an editable install): the repo's own folder
        return CHECKOUT / "registry_cache"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "nexus-gateway" / "registry"


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


LOCK_SECONDS = 10.0


@contextmanager
def updating(path: Path, timeout: float = LOCK_SECONDS) -> Iterator[None]:
    """Hold ``path``'s inter-process lock (``<path>.lock``) around a read-modify-write of it.

    Several gateways share one cache folder (Claude Desktop and Cursor each start one over the same
    config), and an atomic write alone only keeps a reader from seeing half a file: two processes that
    read, change and write it at once still lose one's change. The lock is ``flock``/``LockFileEx``
    through ``filelock``, so a process that dies holding it releases it. When it cannot be had (a
    process stuck past ``timeout``, a folder that takes no lock file) the update goes ahead unlocked with
    a warning: losing the race is no worse than before, and refusing would stop the gateway serving."""
    lock = FileLock(f"{path}.lock", timeout=timeout)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except (Timeout, OSError) as exc:
        logger.warning("%s is updated without its lock (%s); another gateway's change may be lost", path, exc)
        yield
        return
    try:
        yield
    finally:
        lock.release()


def read_json_object(path: Path) -> dict[str, Any]:
    """A small JSON state file (pins, stored logins) as a dict; missing or unreadable is empty."""
    try:
        value = orjson.loads(path.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def seal(payload: bytes) -> bytes:
    return MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload


def unseal(data: bytes, where: str) -> bytes:
    header, newline, payload = data.partition(b"\n")
    if not newline or not header.startswith(MAGIC):
        raise CacheCorrupt(f"{where}: missing header")
    if hashlib.sha256(payload).hexdigest().encode() != header[len(MAGIC) :]:
        raise CacheCorrupt(f"{where}: checksum mismatch (truncated or modified)")
    return payload


class RegistryCache:
    """Checksummed JSON documents keyed by schema hash (tools) and by server name."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def tool_path(self, key: str) -> Path:
        return self.root / "tools" / f"{key}.json"

    def server_path(self, server: str) -> Path:
        return self.root / "servers" / f"{server}.json"

    def read_json(self, path: Path) -> Any | None:
        """The document at ``path``, or None if absent or corrupt (a corrupt file is removed)."""
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.warning("registry cache: cannot read %s: %s", path, exc)
            return None
        try:
            return orjson.loads(unseal(data, str(path)))
        except (CacheCorrupt, orjson.JSONDecodeError) as exc:
            logger.warning("registry cache: %s; rebuilding it", exc)
            path.unlink(missing_ok=True)
            return None

    def write_json(self, path: Path, value: Any) -> None:
        try:
            write_atomic(path, seal(orjson.dumps(value)))
        except OSError as exc:  # a read-only or full disk must never break serving
            logger.warning("registry cache: cannot write %s: %s", path, exc)

    def load_tool(self, key: str) -> dict[str, Any] | None:
        return self.read_json(self.tool_path(key))

    def store_tool(self, key: str, entry: dict[str, Any]) -> None:
        self.write_json(self.tool_path(key), entry)

    def load_server(self, server: str) -> list[str] | None:
        document = self.read_json(self.server_path(server))
        if isinstance(document, dict) and isinstance(document.get("keys"), list):
            return [str(k) for k in document["keys"]]
        return None

    def store_server(self, server: str, keys: list[str]) -> None:
        self.write_json(self.server_path(server), {"server": server, "keys": keys})
