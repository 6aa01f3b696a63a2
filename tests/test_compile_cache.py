"""The kernel cache on the PTX path (`fsir.pipeline.compile_ptx`, fs-run): a warm compile
of an unchanged model lowers nothing and gives the same module and PTX; a model that
shares a kernel with one compiled before takes it from the cache; damaged entries are
ignored and rewritten. Each test has a cache directory of its own (tests/conftest.py
keeps the suite off the user's cache)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fsir.cache import KernelCache, active
from fsir.codegen.options import PipelineOptions
from fsir.pipeline import compile_ptx, emit_ptx, load, lower, read_model
from fsir.stats import collecting

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SERIAL = PipelineOptions(jobs=1)


def compiled(store: KernelCache, module, whole: bool = True):
    """(lowered module, PTX, compile counts, resources) of `module` through `store`."""
    resources: dict = {}
    with collecting() as counts, active(store):
        lowered, ptx = compile_ptx(module, SERIAL, resources=resources, whole=whole)
    return lowered, ptx, counts.result(), resources


def records(directory: Path) -> dict[str, list[Path]]:
    """The entries under `directory` by kind: `compile` (a whole compile's) or `kernel`."""
    out: dict[str, list[Path]] = {"compile": [], "kernel": []}
    for path in sorted(directory.rglob("*.json")):
        payload = json.loads(json.loads(path.read_text())["payload"])
        out["compile" if "module" in payload else "kernel"].append(path)
    return out


@pytest.mark.parametrize("name", ["layernorm.mlir", "softmax.mlir", "softmax_dynamic.mlir", "gelu.mlir"])
def test_a_warm_compile_lowers_nothing_and_equals_the_cold_one(tmp_path, name):
    path = EXAMPLES / name
    store = KernelCache(tmp_path)
    cold_module, cold_ptx, cold, cold_res = compiled(store, read_model(path))
    assert cold.kernels_lowered > 0 and (cold.cache_compile_misses, cold.cache_compile_hits) == (1, 0)
    assert cold_ptx == emit_ptx(lower(read_model(path)))  # the serial compile's PTX
    warm_module, warm_ptx, warm, warm_res = compiled(store, read_model(path))
    assert warm.cache_compile_hits == 1 and warm.kernels_lowered == 0
    assert warm.fusion_candidates == warm.summaries_scored == warm.cache_misses == 0
    assert warm_ptx == cold_ptx
    assert str(warm_module) == str(cold_module)
    assert warm_res.keys() >= cold_res.keys() and all(warm_res[k] == v for k, v in cold_res.items())


def test_other_options_or_source_miss_the_whole_compile(tmp_path):
    store = KernelCache(tmp_path)
    compiled(store, read_model(EXAMPLES / "softmax.mlir"))
    resources: dict = {}
    with collecting() as counts, active(store):
        compile_ptx(read_model(EXAMPLES / "softmax.mlir"), PipelineOptions(jobs=1, fusion="xla"), resources=resources)
    assert counts.result().cache_compile_misses == 1
    text = (EXAMPLES / "softmax.mlir").read_text() + "\n"  # another text, though the same model
    assert compiled(store, load(text))[2].cache_compile_misses == 1


def test_a_model_sharing_a_kernel_takes_it_from_the_cache(tmp_path):
    """The same softmax in a function of another name: another model (the whole compile
    misses) whose kernel has another name, but the kernel's entry serves it."""
    store = KernelCache(tmp_path)
    text = (EXAMPLES / "softmax.mlir").read_text()
    name = text.split("func.func @", 1)[1].split("(", 1)[0]
    _, first_ptx, first, _ = compiled(store, load(text))
    other = load(text.replace(f"@{name}(", "@renamed_model("))
    _, ptx, counts, _ = compiled(store, other)
    assert (counts.cache_compile_misses, counts.cache_hits, counts.cache_misses) == (1, first.cache_misses, 0)
    assert counts.kernels_lowered == 0
    assert ptx == emit_ptx(lower(other)) and ptx != first_ptx
    assert "renamed_model" in ptx and "fsir_cached_kernel" not in ptx


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _tamper(path: Path) -> None:
    record = json.loads(path.read_text())
    record["payload"] = record["payload"].replace("gpu.return", "gpu.return ", 1)  # hash no longer matches
    path.write_text(json.dumps(record))


def _valid_but_wrong(path: Path) -> None:
    """A hash-valid entry whose contents are not what the kind needs."""
    import hashlib

    record = json.loads(path.read_text())
    record["payload"] = json.dumps({"module": 3, "entry": None})
    record["sha256"] = hashlib.sha256(record["payload"].encode()).hexdigest()
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("damage", [_truncate, _tamper, _valid_but_wrong])
@pytest.mark.parametrize("kind", ["compile", "kernel"])
def test_a_damaged_entry_is_ignored_and_rewritten(tmp_path, damage, kind):
    store = KernelCache(tmp_path)
    module = read_model(EXAMPLES / "softmax.mlir")
    _, cold_ptx, _, _ = compiled(store, module)
    [path] = records(tmp_path)[kind]
    good = path.read_bytes()
    damage(path)
    _, ptx, counts, _ = compiled(store, module, whole=kind == "compile")
    assert ptx == cold_ptx
    if kind == "compile":
        assert (counts.cache_compile_hits, counts.cache_compile_misses) == (0, 1)
    else:
        assert (counts.cache_hits, counts.cache_misses, counts.kernels_lowered) == (0, 1, 1)
    assert path.read_bytes() == good  # rewritten
    assert compiled(store, module, whole=kind == "compile")[2].kernels_lowered == 0


WARM = """
import json, sys
from fsir.cache import KernelCache, active
from fsir.pipeline import PipelineOptions, compile_ptx, read_model
from fsir.stats import collecting
with collecting() as counts, active(KernelCache.from_environment(force=True)):
    _, ptx = compile_ptx(read_model(sys.argv[1]), PipelineOptions(jobs=1))
print(json.dumps({"ptx": ptx, "counts": counts.result().as_dict()}))
"""


def test_a_new_process_reads_the_whole_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("FSIR_CACHE_DIR", str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", WARM, str(EXAMPLES / "layernorm.mlir")], check=True,
                                      capture_output=True, text=True).stdout) for _ in range(2)]
    assert runs[0]["counts"]["cache_compile_misses"] == 1 and runs[0]["counts"]["kernels_lowered"] > 0
    assert runs[1]["counts"]["cache_compile_hits"] == 1 and runs[1]["counts"]["kernels_lowered"] == 0
    assert runs[0]["ptx"] == runs[1]["ptx"]


def test_fs_run_warm_equals_cold(tmp_path, monkeypatch):
    """fs-run through the cache: the warm run (stub kernels, resources from the entry)
    gives the same outputs, counters and per-launch model figures as the cold one."""
    from fsir.tools.fs_run import main_impl

    monkeypatch.setenv("FSIR_CACHE", "1")
    monkeypatch.setenv("FSIR_CACHE_DIR", str(tmp_path / "cache"))
    got = []
    for i in range(2):
        js = tmp_path / f"stats{i}.json"
        assert main_impl([str(EXAMPLES / "layernorm.mlir"), "--device", "sim", "--stats-json", str(js), "--quiet",
                          "-j", "1"]) == 0
        got.append(json.loads(js.read_text()))
    assert records(tmp_path / "cache")["compile"]
    assert got[0]["per_launch"][0]["registers"] > 0
    assert got[0] == got[1]


def test_an_entry_without_resources_does_not_serve_a_caller_that_measures(tmp_path):
    """A compile that did not ask for the kernels' resources stores none (measuring
    costs); a later caller that asks (fs-run's kernel-time model) compiles again."""
    store = KernelCache(tmp_path)
    module = read_model(EXAMPLES / "layernorm.mlir")
    with collecting() as counts, active(store):
        compile_ptx(module, SERIAL)
    assert counts.result().cache_compile_misses == 1
    _, _, again, used = compiled(store, module)
    assert (again.cache_compile_misses, again.cache_hits) == (1, 0) and again.kernels_lowered > 0
    _, _, warm, warm_used = compiled(store, module)
    assert warm.cache_compile_hits == 1 and warm_used == used and used and all(r[0] > 0 for r in used.values())


def test_the_key_text_holds_every_constant_value():
    """`key_text` prints dense constants as the hash of their data: equal constants key
    alike, a changed value keys differently."""
    from fsir.cache import key_text

    text = (EXAMPLES / "bert_layer.mlir").read_text()
    assert "dense<1.250000e-01>" in text

    def first_constant(source: str):
        return next(op for op in load(source).walk() if op.name == "graph.constant")

    same = key_text(first_constant(text))
    assert same == key_text(first_constant(text)) and "dense_sha256<" in same
    assert key_text(first_constant(text.replace("dense<1.250000e-01>", "dense<1.250001e-01>", 1))) != same


def test_fs_run_uses_the_cache_unless_told_not_to(tmp_path, monkeypatch):
    """FSIR_CACHE unset: fs-run (the PTX path) uses the cache, fsir.compile does not;
    FSIR_CACHE=0 and --no-cache turn fs-run's off."""
    import fsir
    from fsir.tools.fs_run import main_impl

    def fs_run(*extra: str) -> None:
        assert main_impl([str(EXAMPLES / "layernorm.mlir"), "--device", "sim", "--quiet", "-j", "1", *extra]) == 0

    monkeypatch.delenv("FSIR_CACHE", raising=False)
    for name, setup in [("off", lambda: monkeypatch.setenv("FSIR_CACHE", "0")), ("flag", None), ("api", None)]:
        monkeypatch.setenv("FSIR_CACHE_DIR", str(tmp_path / name))
        if setup is not None:
            setup()
            fs_run()
            monkeypatch.delenv("FSIR_CACHE")
        elif name == "flag":
            fs_run("--no-cache")
        else:
            fsir.compile(EXAMPLES / "layernorm.mlir")
        assert not (tmp_path / name).exists(), name
    monkeypatch.setenv("FSIR_CACHE_DIR", str(tmp_path / "on"))
    fs_run()
    assert records(tmp_path / "on")["compile"] and records(tmp_path / "on")["kernel"]
