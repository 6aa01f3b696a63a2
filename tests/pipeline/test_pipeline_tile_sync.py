"""Tile-synchronised pipelines (cuSync; fsir/codegen/tile_sync.py) on the simulator:
the paper's example pipelines (examples/cusync/) match the reference under TileSync and
RowSync, with and without the wait-kernel and the tile counter; their dependency maps
are sound against the PTX tile by tile (fsir/testing/tile_sync.py); Fig. 4a's grids
wait 12 times under TileSync and 6 under RowSync; the executor issues a pipeline's
launches through Device.launch_pipeline with their streams and priorities.

The simulator runs a pipeline's launches concurrently (fsir/sim/concurrent.py): each
example is checked under fifo, reverse and five random block dispatch orders, and on a
GPU shrunk to four SM slots a consumer-first order deadlocks without the wait-kernel
and completes with it. The dependency check is what shows each consumer tile reads
only the producer tiles it waits for (a dispatch order may still happen to run the
producer first)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from xdsl.dialects import func

import fsir
from fsir.codegen.tile_sync import TileSyncPass
from fsir.dialects import gpu
from fsir.dialects.schedule import StageOp, SyncPolicy, TileDepOp, TileOrder
from fsir.gpuspec import gpu_spec
from fsir.lowering.tile_sync import wait_count
from fsir.pipeline import PipelineOptions, lower, read_model
from fsir.runtime.compare import compare
from fsir.runtime.device import SimDevice
from fsir.runtime.executor import execute
from fsir.runtime.inputs import random_inputs
from fsir.runtime.reference import find_function, run_function, run_function_float64
from fsir.testing.paths import EXAMPLES, example_module
from fsir.testing.pipeline import assemble_all
from fsir.testing.tile_sync import check_dependencies, lower_synced
from fsir.tools.fs_run import main as fs_run
from fsir.tools.fs_run import main_impl as fs_run_impl

CUSYNC = EXAMPLES / "cusync"
PIPELINED = ["fig4a", "gpt3_mlp", "llama_mlp", "attention", "conv2"]
CONFIGS = {  # (policy, wait-kernel, tile order)
    "tile": TileSyncPass(policy="tile", wait_kernel="false", tile_order="none"),
    "tile-WT": TileSyncPass(policy="tile", wait_kernel="true", tile_order="row-major"),
    "row-WT": TileSyncPass(policy="row", wait_kernel="true", tile_order="column-major"),
    "conv": TileSyncPass(policy="conv", wait_kernel="false", tile_order="row-major"),
    "strided": TileSyncPass(policy="strided", wait_kernel="false", tile_order="none"),
    "strided-WT": TileSyncPass(policy="strided", wait_kernel="true", tile_order="strided"),
}


def _model(name: str):
    return read_model(CUSYNC / f"{name}.mlir")


def _scheduled(name: str, sync: TileSyncPass) -> func.FuncOp:
    s = lower_synced(_model(name), sync, until="tile-sync")
    return next(op for op in s.walk() if isinstance(op, func.FuncOp))


CASES = [(n, c) for n in PIPELINED for c in sorted(CONFIGS)
         if not c.startswith("strided") and ((c == "conv") == (n == "conv2") or c == "row-WT")]


@pytest.mark.parametrize("name, config", CASES)
def test_pipeline_matches_reference(name, config):
    module = _model(name)
    f = find_function(module)
    inputs = random_inputs(f, 0)
    lowered = lower_synced(module, CONFIGS[config])
    scheduled = lower_synced(module, CONFIGS[config], until="tile-sync")
    assert any(isinstance(op, StageOp) for op in scheduled.walk())
    consumers = {op.consumer_name for op in scheduled.walk() if isinstance(op, TileDepOp)}
    got, stats = execute(lowered, inputs)
    plain = execute(lower(module), inputs)[1]
    waits = len(consumers) if CONFIGS[config].wait_kernel == "true" else 0
    assert stats.launches == plain.launches + waits  # one wait-kernel per pipeline consumer
    for g, w, e in zip(got, run_function(f, inputs), run_function_float64(f, inputs)):
        c = compare(g, w, exact=e)
        assert c.ok, str(c)


@pytest.mark.parametrize("name", PIPELINED)
def test_dependencies_are_sound(name):
    assert check_dependencies(_model(name)) == []


def test_dependency_check_finds_a_missing_producer_tile(monkeypatch):
    import fsir.codegen.tile_sync as ts

    exact = ts.dependency

    def one_tile_short(c, n, p):
        m, (i, j) = exact(c, n, p)
        return m, (i - 1, j)

    monkeypatch.setattr(ts, "dependency", one_tile_short)
    problems = check_dependencies(_model("fig4a"))
    assert len(problems) == 6 and "tile (0, 0) reads producer tiles beyond [(0, 0)]" in problems[0]


@pytest.mark.parametrize("policy, waits", [("tile", 12), ("row", 6)])
def test_fig4a_wait_counts(policy, waits):
    """The paper's Fig. 4a: 2x2 producer tiles, 2x3 consumer tiles."""
    f = _scheduled("fig4a", TileSyncPass(policy=policy))
    assert wait_count(f) == {"fig4a_k1": waits}
    # the simulator agrees: every wait is one acquire load of thread 0 (semaphores are
    # ready, launches run in order), every post one 4-byte release reduction
    module = _model("fig4a")
    inputs = random_inputs(find_function(module), 0)
    plain = execute(lower(module), inputs)[1]
    synced = execute(lower(module, PipelineOptions(tile_sync=SyncPolicy(policy))), inputs)[1]
    assert synced.global_load_requests - plain.global_load_requests == waits
    assert synced.global_atomic_bytes - plain.global_atomic_bytes == 4 * 4  # one post per producer tile


def test_stages_dependencies_and_waves():
    f = _scheduled("gpt3_mlp", TileSyncPass())
    stages = [op for op in f.walk() if isinstance(op, StageOp)]
    (dep,) = [op for op in f.walk() if isinstance(op, TileDepOp)]
    # the first GEMM (its GeLU a stitched epilogue) feeds the second GEMM
    assert [s.kernel_name for s in stages] == ["gpt3_mlp_k0", "gpt3_mlp_k1"]
    assert [(s.stream.data, s.priority.data) for s in stages] == [(0, 0), (1, 1)]
    # one wave on an H100: auto picks TileSync without the wait-kernel and the tile order
    assert all(s.policy.data == SyncPolicy.TILE and s.order is None and s.wait_kernel is None for s in stages)
    # R: the consumer GEMM, whose B (w2) is a kernel operand, loads it before waiting
    assert [s.reorder is not None for s in stages] == [False, True]
    # consumer tile (5, 2) of 16x16 tiles reads rows 32..47 of the 64x48 GeLU: producer
    # tile row 2, all three tile columns
    assert dep.producer_tiles(5, 2, 3, 4) == [(0, 2), (1, 2), (2, 2)]


def test_auto_turns_on_row_sync_and_wt_from_two_waves(monkeypatch):
    import fsir.codegen.tile_sync as ts
    from fsir.gpuspec import gpu_spec

    monkeypatch.setattr(ts, "gpu_spec", lambda name: dataclasses.replace(gpu_spec(name), sms=1, max_threads_per_sm=256))
    stages = [op for op in _scheduled("fig4a", TileSyncPass()).walk() if isinstance(op, StageOp)]
    assert all(s.policy.data == SyncPolicy.ROW and s.order is not None and s.order.data == TileOrder.ROW_MAJOR
               for s in stages)
    assert [s.wait_kernel is not None for s in stages] == [False, True]


def test_pipeline_ptx_assembles():
    assemble_all(lower_synced(_model("gpt3_mlp"), CONFIGS["row-WT"]))
    # StridedSync, and R's reordered loads in FMA and tensor-core (cp.async) GEMMs
    assemble_all(lower_synced(_model("attention"), CONFIGS["strided-WT"]))
    assemble_all(lower_synced(_model("gpt3_mlp"), CONFIGS["tile"], PipelineOptions(precision="tf32")))


class _Recording(SimDevice):
    def __init__(self):
        super().__init__()
        self.calls = []

    def launch_pipeline(self, requests):
        self.calls.append([(r.kernel, r.grid, r.stream, r.priority) for r in requests])
        return super().launch_pipeline(requests)


def test_executor_issues_a_pipeline_through_launch_pipeline():
    module = _model("fig4a")
    dev = _Recording()
    got, stats = execute(lower_synced(module, CONFIGS["tile-WT"]), random_inputs(find_function(module), 0), dev)
    assert dev.calls == [[("fig4a_k0", (2, 2, 1), 0, 0), ("fig4a_k1_wait", (1, 1, 1), 1, 1),
                          ("fig4a_k1", (3, 2, 1), 1, 1)]]
    assert stats.launches == 3


def test_compile_and_fs_run_take_a_policy(capsys):
    from fsir.tools.fs_run import main_impl

    path = CUSYNC / "fig4a.mlir"
    exe = fsir.compile(str(path), tile_sync="row")
    assert "tile-sync{policy=\"row\"}" in fsir.pipeline.pipeline_text(exe.options)
    x = {n: np.ones(s, np.float32) for n, s in (("a", (32, 32)), ("b", (32, 32)), ("d", (32, 48)))}
    (y,) = exe.run(x, device="sim")
    np.testing.assert_allclose(y, np.full((32, 48), 32.0 * 32.0))
    assert main_impl([str(path), "--device", "sim", "--check", "--tile-sync", "tile"]) == 0
    assert "ok" in capsys.readouterr().out
    assert fsir.compile(str(path), tile_sync="off").options.tile_sync is None
    assert fsir.compile(str(path), tile_sync=SyncPolicy.STRIDED).options.tile_sync is SyncPolicy.STRIDED
    with pytest.raises(fsir.UserError, match="tile_sync 'rows': expected one of off, auto, tile, row, strided, conv"):
        fsir.compile(str(path), tile_sync="rows")
    with pytest.raises(fsir.UserError, match="--tile-sync 'Tiles': expected one of off, auto, tile, row, strided"):
        main_impl([str(path), "--device", "sim", "--tile-sync", "Tiles"])


def test_conv2d_tile_sync_dependency():
    """Conv2DTileSync: a 3x3 window with padding 1 on 8x8 images reads the input rows
    of its output positions, 9 before to 9 after (16-position tiles: up to 3 tiles)."""
    (dep,) = [op for op in _scheduled("conv2", TileSyncPass(policy="conv")).walk() if isinstance(op, TileDepOp)]
    assert [dep.producer_tiles(0, y, 1, 4) for y in range(4)] == [
        [(0, 0), (0, 1)], [(0, 0), (0, 1), (0, 2)], [(0, 1), (0, 2), (0, 3)], [(0, 2), (0, 3)]]


BATCHED = """
func.func @bmlp(%x: tensor<2x32x48xf32>, %w1: tensor<48x32xf32>, %w2: tensor<32x48xf32>) -> (tensor<2x32x32xf32>, tensor<2x32x48xf32>) {
  %h = graph.dot %x, %w1 : (tensor<2x32x48xf32>, tensor<48x32xf32>) -> tensor<2x32x32xf32>
  %y = graph.dot %h, %w2 : (tensor<2x32x32xf32>, tensor<32x48xf32>) -> tensor<2x32x48xf32>
  %g = graph.tanh %y : tensor<2x32x48xf32>
  %z = graph.dot %g, %w1 : (tensor<2x32x48xf32>, tensor<48x32xf32>) -> tensor<2x32x32xf32>
  func.return %z, %y : tensor<2x32x32xf32>, tensor<2x32x48xf32>
}
"""


def test_batched_gemms_fold_the_batch_into_tile_rows():
    """[B, S, H] GEMMs of unbatched weights fold the batch into their rows
    (`folds_batch`): tile row y holds rows of [B x S, H], and a consumer row reads the
    producer rows it covers (one GEMM tile row of 16, or three loop-kernel blocks),
    not every producer tile."""
    module = fsir.pipeline.load(BATCHED)
    sync = TileSyncPass(policy="row", wait_kernel="true", tile_order="row-major")
    scheduled = lower_synced(module, sync, until="tile-sync")
    deps = [op for op in scheduled.walk() if isinstance(op, TileDepOp)]
    assert [(d.consumer_name, d.producer_name) for d in deps] == [("bmlp_k1", "bmlp_k0"), ("bmlp_k3", "bmlp_k2")]
    assert [d.ranges for d in deps] == [(2, 1), (1, 3)]
    assert check_dependencies(module) == []
    f = find_function(module)
    inputs = random_inputs(f, 0)
    got, _ = execute(lower_synced(module, sync), inputs)
    for g, w, e in zip(got, run_function(f, inputs), run_function_float64(f, inputs)):
        c = compare(g, w, exact=e)
        assert c.ok, str(c)


SHARED = """
func.func @shared(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %h = graph.dot %x, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %g = graph.tanh %h : tensor<32x32xf32>
  %y = graph.dot %g, %h : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %y : tensor<32x32xf32>
}
"""


def test_a_member_reading_a_member_waits_on_all_of_it():
    """The tanh kernel runs in the pipeline of the GEMMs (it produces the second GEMM's
    A, the first GEMM its B) and reads the first GEMM's result: it waits on every tile."""
    module = fsir.pipeline.load(SHARED)
    sync = TileSyncPass(policy="tile", wait_kernel="true", tile_order="row-major")
    scheduled = lower_synced(module, sync, until="tile-sync", options=PipelineOptions(gemm="16x16x16"))
    deps = {(d.consumer_name, d.producer_name): d for d in scheduled.walk() if isinstance(d, TileDepOp)}
    assert set(deps) == {("shared_k2", "shared_k1"), ("shared_k2", "shared_k0"), ("shared_k1", "shared_k0")}
    assert deps["shared_k1", "shared_k0"].ranges == (2, 2)  # all 2x2 tiles of the first GEMM
    f = find_function(module)
    inputs = random_inputs(f, 0)
    (got,), _ = execute(lower_synced(module, sync, PipelineOptions(gemm="16x16x16")), inputs)
    c = compare(got, run_function(f, inputs)[0], exact=run_function_float64(f, inputs)[0])
    assert c.ok, str(c)


ORDERS = ["fifo", "reverse", *(f"random:{seed}" for seed in range(5))]


def _expected(module):
    f = find_function(module)
    inputs = random_inputs(f, 0)
    return inputs, run_function(f, inputs), run_function_float64(f, inputs)


def _check(got, want, exact):
    for g, w, e in zip(got, want, exact):
        c = compare(g, w, exact=e)
        assert c.ok, str(c)


@pytest.mark.parametrize("config", ["tile", "row-WT"])
@pytest.mark.parametrize("name", PIPELINED)
def test_examples_run_concurrently_under_every_dispatch_order(name, config):
    """Every block of a pipeline's launches is dispatched onto the A100's SM slots in the
    order given; a consumer block that runs before its producer tiles are posted parks on
    the semaphore. The result and the number of waits do not depend on the order."""
    module = _model(name)
    inputs, want, exact = _expected(module)
    lowered = lower_synced(module, CONFIGS[config])
    waits, spins = set(), 0
    for order in ORDERS:
        dev = SimDevice(dispatch=order)
        got, stats = execute(lowered, inputs, dev)
        _check(got, want, exact)
        assert len(dev.timelines) == 1  # one concurrent launch set: the pipeline
        waits.add(stats.waits)
        spins += stats.spins
    assert len(waits) == 1 and waits.pop() > 0
    if config == "tile":  # no tile counter: random orders start consumer tiles early
        assert spins > 0


def _small_gpu_device(dispatch: str) -> SimDevice:
    dev = SimDevice(dispatch=dispatch)
    dev.spec = dataclasses.replace(gpu_spec("A100"), sms=2, max_blocks_per_sm=2)
    return dev


@pytest.mark.parametrize("policy", ["tile", "row"])
def test_consumer_first_deadlocks_without_the_wait_kernel(policy, capsys):
    """Four SM slots, the consumer's launch dispatched first: its blocks take every slot
    and wait for producer tiles that can never start (the paper's case for the wait-kernel)."""
    argv = [str(CUSYNC / "fig4a.mlir"), "--device", "sim", "--tile-sync", policy,
            "--sim-dispatch", "consumer-first", "--sim-slots", "2x2"]
    with pytest.raises(SystemExit) as e:
        fs_run(argv)
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert "deadlock: every resident block waits" in err and "(4 waiting): kernel 'fig4a_k1'" in err
    assert "not dispatched for want of a free SM slot: 4 blocks of 'fig4a_k0', 2 blocks of 'fig4a_k1'" in err
    # the same slots suffice in FIFO order
    assert fs_run_impl(argv[:5] + ["--sim-slots", "2x2", "--check"]) == 0


@pytest.mark.parametrize("name", ["fig4a", "gpt3_mlp"])
@pytest.mark.parametrize("policy", ["tile", "row"])
def test_consumer_first_with_the_wait_kernel_is_correct(name, policy):
    """The wait-kernel holds the consumer's stream until a producer block has started, so
    the consumer's launch reaches the block scheduler behind the producer's blocks."""
    module = _model(name)
    inputs, want, exact = _expected(module)
    sync = TileSyncPass(policy=policy, wait_kernel="true", tile_order="row-major")
    dev = _small_gpu_device("consumer-first")
    got, stats = execute(lower_synced(module, sync), inputs, dev)
    _check(got, want, exact)
    assert stats.waits > 0 and [k for k, _, _ in dev.launch_log][1].endswith("_wait")


@pytest.mark.parametrize("policy, waits", [("tile", 12), ("row", 6)])
@pytest.mark.parametrize("order", ["fifo", "consumer-first", "random:0"])
def test_fig4a_waits_counted_by_the_concurrent_simulator(policy, waits, order):
    """Fig. 4a's counts from the simulator's `waits` counter of a concurrent run (the
    consumer's launch, the wait-kernel's one wait apart) and one post per producer tile."""
    module = _model("fig4a")
    inputs, want, exact = _expected(module)
    dev = SimDevice(dispatch=order)
    got, _ = execute(lower(module, PipelineOptions(tile_sync=SyncPolicy(policy))), inputs, dev)
    _check(got, want, exact)
    log = {k: st for k, st, _ in dev.launch_log}
    assert log["fig4a_k1"].waits == waits and log["fig4a_k0"].posts == 4


@pytest.mark.parametrize("bad", ["2", "0x2", "ax1"])
def test_sim_slots_is_checked(bad):
    with pytest.raises(fsir.UserError, match=f"--sim-slots '{bad}': expected SMSxBLOCKS"):
        fs_run_impl([str(CUSYNC / "fig4a.mlir"), "--device", "sim", "--sim-slots", bad])


# -- StridedSync: attention reading Q, K and V column slices of one fused QKV GEMM ------------


def _heads():
    """Two heads' attention kernels over one 64x192 QKV GEMM (examples/cusync/generate.py)."""
    return fsir.pipeline.load(example_module("cusync/generate.py").qkv_heads(64, 32, 2))


def _synced_function(module, policy: str) -> func.FuncOp:
    s = lower_synced(module, TileSyncPass(policy=policy), until="tile-sync",
                     options=PipelineOptions(gemm="16x16x16"))
    return next(op for op in s.walk() if isinstance(op, func.FuncOp))


@pytest.mark.parametrize("name, strided, tile, row", [
    # one head: Q, K, V = column tiles 0-1, 2-3, 4-5 of 6x4; stride 2, groups {0, 2, 4}, {1, 3, 5}
    # (the attention kernel reads Q, K and V inside its loops over key tiles, where its
    # waits are placed, and the output GEMM waits inside its k-loop: counts per iteration)
    ("attention", {"attention_k1": 16, "attention_k2": 16}, {"attention_k1": 48, "attention_k2": 16},
     {"attention_k1": 8, "attention_k2": 8}),
    # two heads: 12x4 tiles, stride 4; head h's groups 2h, 2h + 1 of each row
    ("heads", {"qkv_heads_k1": 16, "qkv_heads_k2": 16}, {"qkv_heads_k1": 48, "qkv_heads_k2": 48},
     {"qkv_heads_k1": 8, "qkv_heads_k2": 8}),
])
def test_strided_sync_waits_once_per_group(name, strided, tile, row):
    """StridedSync's semaphores: a QKV tile posts to group 4y + x mod stride (of the producer
    stage), ready at 3; an attention tile waits once per group and row, a third of
    TileSync's waits (RowSync waits once per row but on every column of it)."""
    module = _heads() if name == "heads" else _model(name)
    f = _synced_function(module, "strided")
    stages = {s.kernel_name: s for s in f.walk() if isinstance(s, StageOp)}
    producer = stages[f"{'qkv_heads' if name == 'heads' else name}_k0"]
    assert producer.policy.data == SyncPolicy.STRIDED and producer.sync_stride == (4 if name == "heads" else 2)
    assert wait_count(f) == strided
    assert wait_count(_synced_function(module, "tile")) == tile
    assert wait_count(_synced_function(module, "row")) == row
    # auto: StridedSync where the dependency is strided
    auto = _synced_function(module, "auto")
    assert [s.policy.data for s in auto.walk() if isinstance(s, StageOp)][0] == SyncPolicy.STRIDED
    # the simulator counts the same waits, and one post per QKV tile
    inputs, want, exact = _expected(module)
    dev = SimDevice()
    got, stats = execute(lower_synced(module, TileSyncPass(policy="strided"), PipelineOptions(gemm="16x16x16")),
                         inputs, dev)
    _check(got, want, exact)
    log = {k: st for k, st, _ in dev.launch_log}
    assert {k: int(log[k].waits) for k in strided} == strided
    assert log[producer.kernel_name].posts == (48 if name == "heads" else 24)


@pytest.mark.parametrize("name, config", [("attention", "strided"), ("heads", "strided-WT")])
def test_strided_sync_under_every_dispatch_order(name, config):
    """(strided-WT: the QKV GEMM takes each group's tiles one after another, the strided
    tile order.)"""
    module = _heads() if name == "heads" else _model(name)
    inputs, want, exact = _expected(module)
    scheduled = lower_synced(module, CONFIGS[config], until="tile-sync")
    orders = [s.order.data if s.order is not None else None for s in scheduled.walk() if isinstance(s, StageOp)]
    assert orders == ([None] * 3 if config == "strided" else [TileOrder.STRIDED, TileOrder.ROW_MAJOR, TileOrder.ROW_MAJOR])
    lowered = lower_synced(module, CONFIGS[config])
    waits = set()
    for order in ORDERS:
        dev = SimDevice(dispatch=order)
        got, stats = execute(lowered, inputs, dev)
        _check(got, want, exact)
        waits.add(stats.waits)
    assert len(waits) == 1 and waits.pop() > 0


@pytest.mark.parametrize("name", ["attention", "heads"])
def test_strided_dependencies_are_sound(name):
    assert check_dependencies(_heads() if name == "heads" else _model(name), policy="strided") == []


# -- R: the consumer GEMM loads B before it waits, then A ------------------------------------


@pytest.mark.parametrize("precision", ["fp32", "tf32"])
def test_reordered_loads_under_every_dispatch_order(precision):
    """B's first k-step loads move before the waits (FMA: global loads in the k-loop's first
    step; tensor cores: the first stage's cp.async copies), A's stay after them; the
    pipeline's result equals the stream-serial one under every dispatch order."""
    module = _model("gpt3_mlp")
    options = PipelineOptions(precision=precision)
    sync = TileSyncPass(policy="tile", wait_kernel="false", tile_order="none")
    lowered = lower_synced(module, sync, options)
    consumer = next(op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.sym_name.data == "gpt3_mlp_k1")
    a, b = consumer.body.blocks[0].args[:2]
    order = [("wait" if isinstance(op, gpu.SemWaitOp) else "A" if a in op.operands else "B")
             for op in consumer.walk() if isinstance(op, gpu.SemWaitOp) or {a, b} & set(op.operands)]
    first_a = order.index("A")
    assert order.index("B") < order.index("wait") < first_a and "wait" not in order[first_a:]
    inputs = random_inputs(find_function(module), 0)
    serial, _ = execute(lower(module, options), inputs)
    for dispatch in ORDERS:
        got, stats = execute(lowered, inputs, SimDevice(dispatch=dispatch))
        assert stats.waits > 0
        for g, w in zip(got, serial):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("wait_kernel", ["true", "false"])
def test_strided_consumer_first(wait_kernel):
    """Attention's three kernels under StridedSync on four SM slots, consumers dispatched
    first: the output GEMM's blocks take the slots and deadlock without the wait-kernels;
    with them every stream waits for its producer's first block and the result is right."""
    module = _model("attention")
    inputs, want, exact = _expected(module)
    sync = TileSyncPass(policy="strided", wait_kernel=wait_kernel, tile_order="row-major")
    dev = _small_gpu_device("consumer-first")
    if wait_kernel == "false":
        with pytest.raises(fsir.UserError, match="deadlock: every resident block waits"):
            execute(lower_synced(module, sync), inputs, dev)
        return
    got, stats = execute(lower_synced(module, sync), inputs, dev)
    _check(got, want, exact)
    assert stats.waits == 32 + 2  # the consumers' 16 + 16, and one per wait-kernel


def test_auto_on_many_waves_keeps_strided_sync_with_its_tile_order(monkeypatch):
    """Two waves or more: auto's RowSync and W/T for the other stages, StridedSync with
    the strided tile order for the QKV GEMM."""
    import fsir.codegen.tile_sync as ts

    monkeypatch.setattr(ts, "gpu_spec", lambda name: dataclasses.replace(gpu_spec(name), sms=1, max_threads_per_sm=256))
    stages = [op for op in _synced_function(_heads(), "auto").walk() if isinstance(op, StageOp)]
    assert [(s.policy.data, s.order.data if s.order else None, s.wait_kernel is not None) for s in stages] == [
        (SyncPolicy.STRIDED, TileOrder.STRIDED, False), (SyncPolicy.ROW, TileOrder.ROW_MAJOR, True),
        (SyncPolicy.ROW, TileOrder.ROW_MAJOR, True)]
