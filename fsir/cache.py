"""The persistent kernel cache: a kernel lowered once is not lowered again, and a model
compiled once is not compiled again, in this process or a later one.

    with kernel_cache.active(KernelCache.from_environment()):   # what fs-opt, fs-run, fsir.compile do
        lower(module)                                            # hits skip lowering those kernels

It holds three kinds of entry, each under a sha256 key that starts from fsir's
fingerprint (its version and the hash of its source files):

- a kernel's gpu.func as IR text, keyed by the schedule.kernel op as printed
  (`lowered_kernel`; the paths that keep kernel bodies: `lower`, fs-opt, fsir.compile).
  A hit parses the function back in place of `lower_kernel`. Lowering reads nothing but
  the kernel op (the pipeline's options reach it through the kernel's parameters), so
  no option is part of the key.
- a kernel's PTX entry and stub (signature and attributes), keyed by the op as printed
  under a placeholder name and the arch (`fsir.codegen.parallel.ptx_entry_key`; the PTX
  path, `fsir.pipeline.compile_ptx`). A hit skips stitch-codegen's trial lowering and
  schedule-to-gpu's lowering of the kernel and parses only the stub; the placeholder
  makes the entry serve an equal kernel of another model or position.
- a whole compile's result (the host module with stub kernels as text, the PTX, the
  kernels' resources), keyed by the hash of the model's source text, the options'
  `key()` and the arch (`fsir.pipeline.read_compile`): a hit runs no pass.

Entries are JSON data (never pickles or code) with the sha256 of their contents; an
entry that does not parse, whose hash or key does not match (truncated, corrupt,
tampered or foreign), or whose IR does not parse back is ignored and rewritten.
Writes go to a temporary file in the entry's directory and are renamed over it
(`os.replace`, atomic), so concurrent writers of one entry leave a valid one. The
cache's size is bounded: a hit touches the entry's mtime and, after writes, the least
recently used entries are deleted until the cache fits.

Environment: FSIR_CACHE=1 turns the cache on, FSIR_CACHE=0 off. Unset, it is on for
fs-run (the PTX path: a cold compile costs about what an uncached one does, a warm one a
tenth; docs/benchmarks.md, "The persistent kernel cache") and off for fs-opt and
fsir.compile (the IR paths: a hit costs more than it saves, as xDSL parses a cached
gpu.func more slowly than fsir lowers it). FSIR_CACHE_DIR (default: the
user cache dir, ~/.cache/fsir on Linux), FSIR_CACHE_MAX_MB (default 512).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fsir.stats import count as tally

if TYPE_CHECKING:
    from xdsl.ir import Attribute, Operation

    from fsir.dialects import gpu
    from fsir.dialects.schedule import KernelOp

FORMAT = "fsir-kernel-cache/1"
DEFAULT_MAX_MB = 512
EVICT_TO = 0.9  # after eviction the cache holds at most this fraction of its bound (room before the next scan)
ON = ("1", "on", "true", "yes")


@dataclass(frozen=True)
class KernelCache:
    """A cache directory and its size bound, in bytes."""

    directory: Path
    max_bytes: int = DEFAULT_MAX_MB << 20

    @staticmethod
    def from_environment(force: bool = False, default: bool = False) -> KernelCache | None:
        """The cache the environment asks for (FSIR_CACHE=1, or `force`; `default` where
        FSIR_CACHE is unset or empty), else None."""
        setting = os.environ.get("FSIR_CACHE", "").strip().lower()
        if not force and (setting not in ON if setting else not default):
            return None
        directory = os.environ.get("FSIR_CACHE_DIR") or default_directory()
        max_mb = os.environ.get("FSIR_CACHE_MAX_MB", str(DEFAULT_MAX_MB))
        try:
            max_bytes = int(float(max_mb) * (1 << 20))
        except ValueError:
            from fsir.errors import UserError

            raise UserError(f"FSIR_CACHE_MAX_MB={max_mb!r}: expected a number of megabytes") from None
        return KernelCache(Path(directory), max_bytes)

    # -- entries --------------------------------------------------------------------

    def path(self, key: str) -> Path:
        return self.directory / FORMAT.replace("/", "-") / key[:2] / f"{key}.json"

    def read(self, key: str) -> str | None:
        """The payload stored under `key`, or None where there is no valid entry."""
        path = self.path(key)
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):  # absent, unreadable, truncated, not JSON
            return None
        payload = record.get("payload") if isinstance(record, dict) else None
        if (not isinstance(payload, str) or record.get("format") != FORMAT or record.get("key") != key
                or record.get("sha256") != _sha256(payload)):
            return None
        with contextlib.suppress(OSError):  # the LRU order: a hit is a use
            os.utime(path)
        return payload

    def write(self, key: str, payload: str) -> None:
        """Store `payload` under `key` atomically; a cache that cannot be written is skipped."""
        path = self.path(key)
        record = json.dumps({"format": FORMAT, "key": key, "sha256": _sha256(payload), "payload": payload})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(record)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            return  # a read-only or full disk costs the cache, not the compile

    def read_record(self, key: str) -> dict | None:
        """The JSON object stored under `key` (`write_record`), or None."""
        payload = self.read(key)
        try:
            record = None if payload is None else json.loads(payload)
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    def write_record(self, key: str, record: dict) -> None:
        """Store a JSON object (of strings, numbers, lists) under `key`."""
        self.write(key, json.dumps(record, sort_keys=True))

    def evict(self) -> None:
        """Delete the least recently used entries while the cache is over its bound."""
        entries = []
        for path in self.directory.glob(f"{FORMAT.replace('/', '-')}/*/*.json"):
            with contextlib.suppress(OSError):
                st = path.stat()
                entries.append((st.st_mtime, st.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries, key=lambda e: e[0]):
            with contextlib.suppress(OSError):
                path.unlink()
            total -= size
            if total <= self.max_bytes * EVICT_TO:
                break


def default_directory() -> str:
    import platformdirs

    return platformdirs.user_cache_dir("fsir", appauthor=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def fingerprint() -> str:
    """fsir's version and a hash of its source files: a change to fsir invalidates every entry."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("fsir")
    except PackageNotFoundError:
        release = "unknown"
    digest = hashlib.sha256(release.encode())
    root = Path(__file__).resolve().parent
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".lark") and p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def entry_key(kind: str, *parts: str) -> str:
    """The key of an entry of `kind` made from `parts` (texts), under fsir's fingerprint."""
    return _sha256("\n".join((fingerprint(), kind, *parts)))


def key_text(op: Operation) -> str:
    """`op` as printed, except that each dense elements attribute prints as the sha256 of
    its raw data and its type: as exact as the printed form, and much faster where a
    splat constant is stored at full size (printing unpacks every element to find the
    splat; a BERT layer's six kernels: 0.03 s against 0.44 s)."""
    import io

    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
    from xdsl.printer import Printer

    class KeyPrinter(Printer):
        def print_attribute(self, attribute: Attribute) -> None:
            if isinstance(attribute, DenseIntOrFPElementsAttr):
                self.print_string(f"dense_sha256<{hashlib.sha256(attribute.data.data).hexdigest()}> : ")
                super().print_attribute(attribute.type)
                return
            super().print_attribute(attribute)

    out = io.StringIO()
    KeyPrinter(stream=out).print_op(op)
    return out.getvalue()


def kernel_key(k: KernelOp) -> str:
    """The cache key of lowering `k`: the op as printed (its name, parameters, body and
    argument names, all lowering reads) and fsir's fingerprint."""
    return _sha256(f"{fingerprint()}\n{k}")


# -- the cache schedule-to-gpu uses ------------------------------------------------

_ACTIVE: ContextVar[KernelCache | None] = ContextVar("fsir_kernel_cache", default=None)
# kernels lowered before schedule-to-gpu ran (by worker processes), by kernel name
_READY: ContextVar[dict[str, gpu.FuncOp] | None] = ContextVar("fsir_ready_kernels", default=None)


def current() -> KernelCache | None:
    """The cache made active around this call (`active`), if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def active(cache: KernelCache | None) -> Iterator[None]:
    """Use `cache` (None: none) for the kernels lowered inside the block; the entries
    written are bounded by eviction when the block ends."""
    token = _ACTIVE.set(cache)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
        if cache is not None:
            cache.evict()


@contextlib.contextmanager
def ready(funcs: dict[str, gpu.FuncOp]) -> Iterator[None]:
    """Within: `lowered_kernel` takes the function of a kernel named in `funcs` from
    there (each once) instead of lowering it (`fsir.codegen.parallel`)."""
    token = _READY.set(funcs)
    try:
        yield
    finally:
        _READY.reset(token)


def lowered_kernel(k: KernelOp, lower: Callable[[KernelOp], gpu.FuncOp], cacheable: bool = True,
                   in_memory: bool = False) -> gpu.FuncOp:
    """`k`'s gpu.func: made ready (`ready`), else from the active cache, else `lower(k)`
    (written to the cache). `in_memory`: `lower(k)` takes a function lowered before in
    this process (stitch-codegen's trial), which costs less than parsing an entry: it is
    taken, and the entry is compared with it as printed (rewritten where it differs:
    lowering is deterministic, so a valid entry is that text)."""
    done = _READY.get()
    if done is not None and k.sym_name.data in done:
        return done.pop(k.sym_name.data)
    cache = _ACTIVE.get()
    if cache is None or not cacheable:
        return lower(k)
    key = kernel_key(k)
    if in_memory:
        fn = lower(k)
        text = str(fn)
        found = cache.read(key) == text
        tally("cache_hits" if found else "cache_misses")
        if not found:
            cache.write(key, text)
        return fn
    text = cache.read(key)
    fn = None if text is None else parse_function(text, k)
    if fn is not None:
        tally("cache_hits")
        return fn
    tally("cache_misses")
    fn = lower(k)
    cache.write(key, str(fn))
    return fn


def parse_function(text: str, k: KernelOp) -> gpu.FuncOp | None:
    """The gpu.func `text` holds, located at `k` as a lowered one is; None if it is not one."""
    from xdsl.parser import Parser

    from fsir.dialects import gpu

    try:
        fn = Parser(_context(), text, "<fsir kernel cache>").parse_op()
    except Exception:  # noqa: BLE001 - any parse failure is a corrupt entry: relower
        return None
    if not isinstance(fn, gpu.FuncOp) or fn.sym_name.data != k.sym_name.data:
        return None
    fn.location = k.location
    return fn


def parse_module_text(text: str):
    """The module `text` holds (fsir's context), or None where it does not parse."""
    from xdsl.parser import Parser

    try:
        return Parser(_context(), text, "<fsir kernel cache>").parse_module()
    except Exception:  # noqa: BLE001 - any parse failure is a corrupt entry: recompile
        return None


@functools.cache
def _context():
    from fsir.parse import make_context

    return make_context()
