"""The tuning log: one JSON object per line, appended as measurements come in.

    {"key": "...", "mapping": "gemm", "config": "gemm/64x64x32/32x32/f16",
     "decisions": [["sketch", "gemm-mma"], ["m_threads", 2], ...],
     "seconds": 1.9e-05, "error": null, "detail": "", "gpu": "H100", "arch": "sm_80",
     "measurer": "model", "fsir": "0.1.0", "sizes": {"B": 8}}

`key` is the workload key (`task.workload_key`); `error` one of `MeasureError` or
null; `sizes` (only on records of a model tuned with `--sizes`) the sizes of its
symbolic dims the model was specialised to. Reading skips, with a located warning
(`file:line: warning: ...`), lines that are not JSON objects of this shape, and lines
of another fsir version (a record's decisions need the version's space to mean the
same configuration).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from fsir.tune.measure import MeasureError
from fsir.tune.space import Trace


def fsir_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fsir")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Record:
    key: str
    mapping: str
    config: str
    trace: Trace
    seconds: float | None
    error: MeasureError | None
    detail: str
    gpu: str
    arch: str
    measurer: str
    fsir: str
    # the sizes of a model's symbolic dims it was tuned at (`--sizes`; `sizes.py`), by symbol
    sizes: tuple[tuple[str, int], ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None and self.seconds is not None and math.isfinite(self.seconds)

    def to_json(self) -> str:
        return json.dumps({"key": self.key, "mapping": self.mapping, "config": self.config,
                           "decisions": self.trace.to_json(), "seconds": self.seconds,
                           "error": None if self.error is None else str(self.error), "detail": self.detail,
                           "gpu": self.gpu, "arch": self.arch, "measurer": self.measurer, "fsir": self.fsir,
                           **({"sizes": dict(self.sizes)} if self.sizes else {})})

    @staticmethod
    def from_json(line: str) -> Record:
        """Raises ValueError (with what is wrong) on a malformed line."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        strings = ("key", "mapping", "config", "gpu", "arch", "measurer", "fsir")
        for name in strings:
            if not isinstance(data.get(name), str):
                raise ValueError(f"'{name}' must be a string")
        seconds = data.get("seconds")
        if seconds is not None and (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)):
            raise ValueError("'seconds' must be a number or null")
        error = data.get("error")
        sizes = data.get("sizes", {})
        if not isinstance(sizes, dict) or not all(isinstance(k, str) and isinstance(v, int)
                                                  and not isinstance(v, bool) for k, v in sizes.items()):
            raise ValueError("'sizes' must be an object of integers")
        return Record(data["key"], data["mapping"], data["config"], Trace.from_json(data.get("decisions")),
                      None if seconds is None else float(seconds),
                      None if error is None else MeasureError(error), str(data.get("detail", "")),
                      data["gpu"], data["arch"], data["measurer"], data["fsir"], tuple(sorted(sizes.items())))


class Database:
    """The records of a log file (read at construction) and the appender of new ones."""

    def __init__(self, path: str | Path | None, warn: IO[str] | None = None,
                 sizes: tuple[tuple[str, int], ...] = ()):
        """`sizes`: carried by every record added (a model specialised to them, `--sizes`)."""
        self.path = None if path is None else Path(path)
        self.sizes = sizes
        self.records: list[Record] = []
        self.warnings: list[str] = []
        if self.path is not None and self.path.exists():
            self.records = list(self._read(self.path, warn if warn is not None else sys.stderr))

    def _read(self, path: Path, warn: IO[str]) -> Iterable[Record]:
        version = fsir_version()
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = Record.from_json(line)
            except (ValueError, KeyError, TypeError) as err:
                self._warn(warn, f"{path}:{n}: warning: skipped a malformed record ({err})")
                continue
            if rec.fsir != version:
                self._warn(warn, f"{path}:{n}: warning: skipped a record of fsir {rec.fsir} (this is {version})")
                continue
            yield rec

    def _warn(self, warn: IO[str], message: str) -> None:
        self.warnings.append(message)
        print(message, file=warn)

    def add(self, rec: Record) -> None:
        if self.sizes and not rec.sizes:
            rec = replace(rec, sizes=self.sizes)
        self.records.append(rec)
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(rec.to_json() + "\n")

    def of(self, key: str, gpu: str | None = None, arch: str | None = None) -> list[Record]:
        return [r for r in self.records if r.key == key and (gpu is None or r.gpu == gpu)
                and (arch is None or r.arch == arch)]

    def best(self, key: str, gpu: str | None = None, arch: str | None = None) -> Record | None:
        ok = [r for r in self.of(key, gpu, arch) if r.ok]
        return min(ok, key=lambda r: r.seconds or math.inf) if ok else None

    def best_per_key(self) -> dict[str, Record]:
        out: dict[str, Record] = {}
        for r in self.records:
            if r.ok and (r.key not in out or (r.seconds or math.inf) < (out[r.key].seconds or math.inf)):
                out[r.key] = r
        return out
