"""The persistent kernel cache (fsir/cache.py): a warm compile lowers no kernel and gives
the same IR and PTX; bad entries are ignored and rewritten; concurrent writers leave a
valid entry; the size bound evicts the least recently used entries.

The suite runs with the cache off (tests/conftest.py); these tests turn it on, each in
a directory of its own.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fsir
from fsir.cache import FORMAT, KernelCache, active, kernel_key
from fsir.dialects.schedule import KernelOp
from fsir.pipeline import load, lower

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SMALL = ["layernorm.mlir", "softmax.mlir", "gelu.mlir", "rmsnorm.mlir", "softmax_dynamic.mlir"]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("FSIR_CACHE", "1")
    monkeypatch.setenv("FSIR_CACHE_DIR", str(tmp_path))
    return tmp_path


def entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


@pytest.mark.parametrize("name", SMALL)
def test_a_warm_compile_hits_every_kernel_and_equals_the_cold_one(cache_dir, name):
    cold = fsir.compile(EXAMPLES / name)
    warm = fsir.compile(EXAMPLES / name)
    kernels = len(entries(cache_dir))
    assert kernels > 0
    assert (cold.compile_stats.cache_misses, cold.compile_stats.cache_hits) == (kernels, 0)
    assert (warm.compile_stats.cache_hits, warm.compile_stats.cache_misses) == (kernels, 0)
    assert str(warm.module) == str(cold.module)
    assert warm.ptx == cold.ptx


def test_a_warm_executable_runs_as_the_cold_one(cache_dir):
    import numpy as np

    cold = fsir.compile(EXAMPLES / "layernorm.mlir")
    warm = fsir.compile(EXAMPLES / "layernorm.mlir")
    assert warm.compile_stats.cache_hits > 0
    rng = np.random.default_rng(0)
    f = next(op for op in cold.source.walk() if op.name == "func.func")
    inputs = [rng.standard_normal(a.type.get_shape()).astype(np.float32) for a in f.body.blocks[0].args]
    for got, want in zip(warm.run(inputs, device="sim"), cold.run(inputs, device="sim")):
        assert np.array_equal(got, want)


def test_cache_false_and_fsir_cache_0_bypass_the_cache(cache_dir, monkeypatch):
    exe = fsir.compile(EXAMPLES / "layernorm.mlir", cache=False)
    assert exe.compile_stats.cache_misses == exe.compile_stats.cache_hits == 0
    assert exe.compile_stats.kernels_lowered > 0
    assert entries(cache_dir) == []
    monkeypatch.setenv("FSIR_CACHE", "0")
    exe = fsir.compile(EXAMPLES / "layernorm.mlir")
    assert exe.compile_stats.cache_misses == 0 and entries(cache_dir) == []
    monkeypatch.delenv("FSIR_CACHE")  # off by default
    assert fsir.compile(EXAMPLES / "layernorm.mlir").compile_stats.cache_misses == 0
    exe = fsir.compile(EXAMPLES / "layernorm.mlir", cache=True)  # on when asked
    assert exe.compile_stats.cache_misses > 0 and entries(cache_dir)


def test_the_key_is_the_printed_kernel_and_fsir():
    module = lower(load(EXAMPLES / "softmax.mlir"), until="stitch-codegen")
    k = next(op for op in module.walk() if isinstance(op, KernelOp))
    assert kernel_key(k) == kernel_key(k.clone())
    other = k.clone()
    other.sym_name = type(k.sym_name)("renamed")
    assert kernel_key(other) != kernel_key(k)


def _corrupt_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _corrupt_garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xff not json")


def _tamper_payload(path: Path) -> None:
    record = json.loads(path.read_text())
    record["payload"] = record["payload"].replace("gpu.return", "gpu.return ")  # the hash no longer matches
    path.write_text(json.dumps(record))


def _foreign_key(path: Path) -> None:
    record = json.loads(path.read_text())
    record["key"] = "0" * 64  # another entry's contents (hash valid, key not)
    path.write_text(json.dumps(record))


def _not_a_function(path: Path) -> None:
    import hashlib

    record = json.loads(path.read_text())
    record["payload"] = "builtin.module {}"  # hash valid, but no gpu.func
    record["sha256"] = hashlib.sha256(record["payload"].encode()).hexdigest()
    path.write_text(json.dumps(record))


def _wrong_format(path: Path) -> None:
    record = json.loads(path.read_text())
    record["format"] = "fsir-kernel-cache/0"
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("damage", [_corrupt_truncate, _corrupt_garbage, _tamper_payload, _foreign_key,
                                    _not_a_function, _wrong_format])
def test_a_bad_entry_is_ignored_and_rewritten(cache_dir, damage):
    cold = fsir.compile(EXAMPLES / "softmax.mlir")
    [path] = entries(cache_dir)
    good = path.read_bytes()
    damage(path)
    assert path.read_bytes() != good
    again = fsir.compile(EXAMPLES / "softmax.mlir")
    assert (again.compile_stats.cache_hits, again.compile_stats.cache_misses) == (0, 1)
    assert again.ptx == cold.ptx
    assert path.read_bytes() == good  # rewritten
    assert fsir.compile(EXAMPLES / "softmax.mlir").compile_stats.cache_hits == 1


def test_an_unwritable_cache_costs_the_cache_not_the_compile(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("FSIR_CACHE", "1")
    monkeypatch.setenv("FSIR_CACHE_DIR", str(blocker))
    exe = fsir.compile(EXAMPLES / "layernorm.mlir")
    assert exe.compile_stats.cache_misses > 0


WRITER = """
import sys
from pathlib import Path
from fsir.cache import KernelCache
cache = KernelCache(Path(sys.argv[1]))
payload = sys.argv[2] * 200_000  # large enough that an unsynchronised write would interleave
for _ in range(40):
    cache.write("ab" * 32, payload)
    read = cache.read("ab" * 32)
    assert read is None or read in (("x" * 200_000), ("y" * 200_000)), "a torn entry was read"
"""


def test_two_processes_writing_one_entry_leave_a_valid_one(tmp_path):
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), ch], stderr=subprocess.PIPE, text=True)
               for ch in "xy"]
    for w in writers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    assert KernelCache(tmp_path).read("ab" * 32) in ("x" * 200_000, "y" * 200_000)
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["ab" * 32 + ".json"]  # no temporary left


def test_two_fs_opt_processes_share_a_cache(tmp_path):
    env = {**os.environ, "FSIR_CACHE": "1", "FSIR_CACHE_DIR": str(tmp_path)}
    command = [sys.executable, "-m", "fsir.tools.fs_opt", str(EXAMPLES / "rmsnorm.mlir"),
               "-p", "fusion-explore,stitch-codegen,schedule-to-gpu", "-t", "ptx"]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [r.communicate(timeout=120) for r in runs]
    assert all(r.returncode == 0 for r in runs), [err for _, err in outputs]
    assert outputs[0][0] == outputs[1][0]
    warm = subprocess.run([*command, "--time-passes"], env=env, capture_output=True, text=True, timeout=120)
    assert warm.stdout == outputs[0][0]
    assert "cache_misses: 0" in warm.stderr and "cache_hits: 0" not in warm.stderr


def test_the_least_recently_used_entries_are_evicted(tmp_path):
    cache = KernelCache(tmp_path, max_bytes=10_000)
    keys = [f"{i:064x}" for i in range(6)]
    for n, key in enumerate(keys):
        cache.write(key, "z" * 2_000)
        os.utime(cache.path(key), (1_000_000 + n, 1_000_000 + n))  # written in order, a second apart
    assert cache.read(keys[0]) is not None  # a hit: now the most recently used
    cache.evict()
    kept = {k for k in keys if cache.path(k).exists()}
    assert keys[0] in kept and keys[1] not in kept and keys[-1] in kept
    assert sum(cache.path(k).stat().st_size for k in kept) <= 10_000


def test_a_compile_keeps_the_cache_within_its_bound(cache_dir, monkeypatch):
    monkeypatch.setenv("FSIR_CACHE_MAX_MB", "0.001")  # ~1 KB: smaller than one entry
    fsir.compile(EXAMPLES / "layernorm.mlir")
    assert sum(p.stat().st_size for p in entries(cache_dir)) <= 1100


def test_entries_are_json_data(cache_dir):
    fsir.compile(EXAMPLES / "gelu.mlir")
    for path in entries(cache_dir):
        record = json.loads(path.read_text())
        assert record["format"] == FORMAT and path.stem == record["key"]
        assert record["payload"].lstrip().startswith("gpu.func")


def test_the_active_cache_is_scoped(tmp_path):
    module = load(EXAMPLES / "layernorm.mlir")
    with active(KernelCache(tmp_path)):
        lower(module)
    written = entries(tmp_path)
    assert written
    lower(module)  # outside the scope: no cache
    assert entries(tmp_path) == written


def test_a_warm_compile_takes_stitch_codegens_own_lowering_over_parsing_the_entry(cache_dir, monkeypatch):
    """Parsing a gpu.func costs more than lowering it: where stitch-codegen lowered the
    kernel already (its trial), the entry is only checked, never parsed."""
    from fsir import cache as kernel_cache

    cold = fsir.compile(EXAMPLES / "layernorm.mlir")

    def refuse(text, k):
        raise AssertionError(f"parsed the cache entry of {k.sym_name.data}")

    monkeypatch.setattr(kernel_cache, "parse_function", refuse)
    warm = fsir.compile(EXAMPLES / "layernorm.mlir")
    assert warm.compile_stats.cache_hits == cold.compile_stats.cache_misses > 0
    assert warm.ptx == cold.ptx
