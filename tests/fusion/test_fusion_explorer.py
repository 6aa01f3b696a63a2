"""The fusion explorer (FusionStitching §5): plans never change results, every fusion it
proposes is one stitch-codegen can make, and the plans for the examples are the ones
the paper and the peers lead us to expect."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func

from fsir.codegen.capability import can_extend, can_generate, can_pack, known_of
from fsir.codegen.stitch_codegen import FusionCodegen
from fsir.dialects.stitch import FusionOp
from fsir.errors import UserError
from fsir.fusion.explorer import ExplorerOptions, apply_plan, explore, report
from fsir.fusion.horizontal import merge_sibling_dots
from fsir.ir import verify
from fsir.parse import parse_module
from fsir.runtime.reference import find_function, run
from fsir.testing.paths import EXAMPLES
from fsir.testing.random_graphs import random_graph, random_inputs

EXAMPLE_FILES = sorted(EXAMPLES.glob("*.mlir"))


def _plan(text: str, **options):
    module = parse_module(text)
    f = find_function(module)
    ex = explore(f.body.block, ExplorerOptions(**options))
    apply_plan(f.body.block, ex)
    verify(module)
    return module, ex


def _fusions(module) -> list[FusionOp]:
    return [op for op in module.walk() if isinstance(op, FusionOp)]


def _codegen_accepts(module) -> None:
    for i, fusion in enumerate(_fusions(module)):
        FusionCodegen(fusion, f"k{i}").build()  # raises UserError if it cannot


def _same_results(text: str, rng: np.random.Generator, **options) -> None:
    before = parse_module(text)
    inputs = random_inputs(before, rng)
    after, _ = _plan(text, **options)
    if _dots(after) < _dots(before):
        # The plan merged dots sharing their lhs (`horizontal.py`): one matmul over the
        # concatenated weights sums in another order than several (test_horizontal.py
        # checks that rewrite against the reference within f32 tolerance); the plan
        # itself changes no bit of the merged graph's results.
        merge_sibling_dots(find_function(before).body.block)
        assert _dots(after) == _dots(before)
    expected = run(before, inputs)
    got = run(after, inputs)
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype and e.shape == g.shape
        if e.dtype.kind not in "biu":  # NaN == NaN here (bf16 arrays need a float view)
            e, g = e.astype(np.float64), g.astype(np.float64)
        np.testing.assert_array_equal(e, g)  # same ops, same order per value: bit-exact


def _dots(module) -> int:
    return sum(1 for op in module.walk() if op.name == "graph.dot")


MODES = [dict(mode="stitch"), dict(mode="xla"), dict(mode="stitch", remote=False),
         dict(mode="stitch", top_k=1, beam=1)]


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.stem for p in EXAMPLE_FILES])
@pytest.mark.parametrize("options", MODES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_examples_keep_their_results(path: Path, options):
    _same_results(path.read_text(), np.random.default_rng(0), **options)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=[p.stem for p in EXAMPLE_FILES])
@pytest.mark.parametrize("mode", ["stitch", "xla"])
def test_examples_fusions_are_generated_by_codegen(path: Path, mode: str):
    module, _ = _plan(path.read_text(), mode=mode)
    _codegen_accepts(module)


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_keep_their_results(seed: int):
    text = random_graph(seed, max_ops=14)
    mode = ("stitch", "xla")[seed % 2]
    _same_results(text, np.random.default_rng(seed), mode=mode, remote=seed % 3 != 0)


@pytest.mark.parametrize("seed", range(40))
def test_random_graph_fusions_are_generated_by_codegen(seed: int):
    text = random_graph(1000 + seed, max_ops=16, dynamic=0.0)
    module, _ = _plan(text, mode="stitch")
    _codegen_accepts(module)


def _kernels(ex):
    return [k for k in ex.plan.kernels if k.kernels]


@pytest.mark.parametrize("name", ["layernorm", "softmax", "rmsnorm", "gelu"])
def test_normalizations_are_one_kernel_in_stitch_mode(name: str):
    module, ex = _plan((EXAMPLES / f"{name}.mlir").read_text(), mode="stitch")
    assert len(_kernels(ex)) == 1 and len(_fusions(module)) == 1


@pytest.mark.parametrize("name", ["layernorm", "softmax"])
def test_normalizations_are_at_least_three_kernels_in_xla_mode(name: str):
    _, ex = _plan((EXAMPLES / f"{name}.mlir").read_text(), mode="xla")
    assert len(_kernels(ex)) >= 3


@pytest.mark.parametrize("gpu", ["A100", "H100"])
def test_bert_layer_against_the_peers(gpu: str):
    """Peers (docs/peers.md): TVM 15 launches / 63.0 MB, XLA 15 / 81.8 MB, Inductor 16 / 69.2 MB.
    Stitch mode on an A100: 7 launches (4 GEMMs: Q, K, V's projections as one over the
    concatenated weights, each B tile staged from one weight (`tile_sources`); the
    FFN's first with its bias and GELU as a stitched epilogue; the attention -- Q·Kᵀ,
    scale, mask, softmax, ·V with the Q, K, V bias adds and head transposes, its output
    stored with the heads merged back -- one kernel; 2 LayerNorms) and under 50 MB,
    issue #12's targets. On an H100 the latency-evaluator scores three split-K GEMMs
    (8-way: a 256x768 product fills a third of its SMs) 4% below the merged one, whose
    144 tiles fill them unsplit (measured 22.4 against 23.2 µs with launches): 9 launches."""
    _, stitch = _plan((EXAMPLES / "bert_layer.mlir").read_text(), mode="stitch", gpu=gpu)
    _, xla = _plan((EXAMPLES / "bert_layer.mlir").read_text(), mode="xla", gpu=gpu)
    stitch_kernels, xla_kernels = len(_kernels(stitch)), len(_kernels(xla))
    # (H100: 9 by this model, 7 as soon as the merged GEMM scores below the split ones)
    assert stitch_kernels in ((7,) if gpu == "A100" else (7, 9)) and stitch_kernels < xla_kernels
    traffic = sum(k.traffic for k in _kernels(stitch))
    assert traffic < sum(k.traffic for k in _kernels(xla))
    # issue #12's 50 MB with Q, K and V merged; else below the best peer's 63.0 MB (TVM)
    assert traffic < (50.0e6 if stitch_kernels == 7 else 63.0e6)


def test_report_lists_kernels_bytes_and_scores():
    _, ex = _plan((EXAMPLES / "layernorm.mlir").read_text(), mode="stitch")
    text = report("layernorm", ex)
    assert "before: 15 kernels" in text
    assert "after: 1 kernels (1 fused)" in text
    assert "fusion pattern=0 ops=15 f=" in text


def test_bad_options_are_user_errors():
    text = (EXAMPLES / "softmax.mlir").read_text()
    with pytest.raises(UserError, match="unknown GPU"):
        _plan(text, gpu="Z80")
    with pytest.raises(UserError, match="top-k must be at least 1"):
        _plan(text, top_k=0)


def test_planning_is_deterministic():
    text = (EXAMPLES / "bert_layer.mlir").read_text()
    import io

    from xdsl.printer import Printer

    outs = []
    for _ in range(2):
        module, _ = _plan(text, mode="stitch")
        buf = io.StringIO()
        Printer(stream=buf).print_op(module)
        outs.append(buf.getvalue())
    assert outs[0] == outs[1]


# -- the incremental forms of the capability check agree with the full check -----------


def test_incremental_capability_matches_full_check():
    checked = reductions = 0
    for seed in range(40):
        c, r = _check_extensions(seed)
        checked += c
        reductions += r
    assert checked > 100
    assert reductions > 10  # reductions joining a set with reductions, told by what was kept of it


def _check_extensions(seed: int) -> tuple[int, int]:
    """Random sets grown upwards one producer at a time, each step's incremental
    verdict (from what was kept of the set before) against the full check."""
    module = parse_module(random_graph(2000 + seed, max_ops=16))
    f = find_function(module)
    ops = [op for op in f.body.block.ops if op.name.startswith("graph.") and op.name != "graph.constant"]
    rng = random.Random(seed)
    from fsir.dialects import graph
    from fsir.dialects.graph import shape_of

    def row_shape(s):
        reds = [op for op in s if isinstance(op, graph.ReduceOp)]
        return shape_of(reds[0].result.type) if reds else None

    checked = reductions = 0
    for _ in range(60):
        start = rng.randrange(len(ops))
        grown = [ops[start]]
        # grow downwards: consumers within the function, like the explorer does
        for _ in range(rng.randrange(1, 6)):
            users = [u.operation for op in grown for r in op.results for u in r.uses
                     if u.operation in ops and u.operation not in grown]
            if not users:
                break
            grown.append(rng.choice(users))
        base = sorted(set(grown[1:]), key=ops.index)
        if not base or any(isinstance(op, graph.DotOp) for op in grown) or can_generate(base) is not None:
            continue
        known = known_of(base)
        op = grown[0]
        for _ in range(6):  # then upwards: producers on top, from what was kept
            if any(o.owner in base for o in op.operands) or isinstance(op, graph.DotOp):
                break
            union = sorted({*base, op}, key=ops.index)
            escapes = any(u.operation not in union for u in op.results[0].uses)
            fast, known = can_extend(row_shape(base), op, escapes, union.__contains__, known)
            full = can_generate(union)
            if fast is not NotImplemented:
                checked += 1
                reductions += isinstance(op, graph.ReduceOp)
                assert (fast is None) == (full is None), [o.name for o in union]
            if full is not None:
                break
            if known is None:
                known = known_of(union)
            base = union
            producers = [o.owner for m in base for o in m.operands
                         if o.owner in ops and o.owner not in base
                         and not any(p.owner in base for p in o.owner.operands)]
            if not producers:
                break
            op = rng.choice(producers)
    return checked, reductions


def test_pack_verdicts():
    assert can_pack(None, None) is None
    assert can_pack((4,), None) is None
    assert can_pack((4,), (4,)) is None
    assert "different row shapes" in can_pack((4,), (8,))


def test_function_order_is_kept_valid_for_every_function():
    text = (EXAMPLES / "layernorm.mlir").read_text() + (EXAMPLES / "softmax.mlir").read_text()
    module = parse_module(text)
    for f in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        ex = explore(f.body.block, ExplorerOptions())
        apply_plan(f.body.block, ex)
    verify(module)
    assert len(_fusions(module)) == 2


@pytest.mark.parametrize("seed,mode,options", [
    (8040, "xla", {}),  # packing two reductions of different rows, one of them to a scalar
    (8064, "stitch", dict(top_k=1, beam=1, group_size=1)),
])
def test_regressions_from_fuzzing(seed: int, mode: str, options):
    module, _ = _plan(random_graph(seed, max_ops=20, dynamic=0.0), mode=mode, **options)
    _codegen_accepts(module)
