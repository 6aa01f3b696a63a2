"""An attention kernel that also computes its Q, K and V as slices of one projection
plus a bias each (BERT's merged Q/K/V GEMM, heads split by reshape and transpose): the
bias is read along the staged tiles' columns only, so each thread loads its bias
elements once, before the loops, instead of once per staged element and key tile
(`ElementEmitter.for_loop`'s hoisting, `AttentionLowering.tile_position`)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import memref, scf

from fsir.dialects import gpu
from fsir.dialects.schedule import AttentionParamsAttr, KernelOp
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.reference import run


def attention_with_bias(b: int, s: int, heads: int, d: int, bias: bool = True) -> str:
    """softmax(q·kᵀ/√d + mask)·v of q, k, v = slices of qkv [B, S, 3H] (+ a bias [H]
    each), split into heads [B, heads, S, d]."""
    h = heads * d
    t3, t4 = f"tensor<{b}x{s}x{h}xf32>", f"tensor<{b}x{s}x{heads}x{d}xf32>"
    th, ts = f"tensor<{b}x{heads}x{s}x{d}xf32>", f"tensor<{b}x{heads}x{s}x{s}xf32>"
    tr = f"tensor<{b}x{heads}x{s}xf32>"
    args = [f"%qkv: tensor<{b}x{s}x{3 * h}xf32>", f"%mask: tensor<{b}x1x1x{s}xf32>"]
    lines = []
    for i, n in enumerate("qkv"):
        lines.append(f"  %{n}_mm = graph.slice %qkv start [0, 0, {i * h}] limit [{b}, {s}, {(i + 1) * h}] "
                     f"strides [1, 1, 1] : (tensor<{b}x{s}x{3 * h}xf32>) -> {t3}")
        x = f"%{n}_mm"
        if bias:
            args.append(f"%b{n}: tensor<{h}xf32>")
            lines += [f"  %b{n}_b = graph.broadcast %b{n} dims [2] : (tensor<{h}xf32>) -> {t3}",
                      f"  %{n} = graph.add %{n}_mm, %b{n}_b : {t3}"]
            x = f"%{n}"
        lines += [f"  %{n}_s = graph.reshape {x} : ({t3}) -> {t4}",
                  f"  %{n}_h = graph.transpose %{n}_s perm [0, 2, 1, 3] : ({t4}) -> {th}"]
    lines += [
        f"  %kt = graph.transpose %k_h perm [0, 1, 3, 2] : ({th}) -> tensor<{b}x{heads}x{d}x{s}xf32>",
        f"  %qk = graph.dot %q_h, %kt : ({th}, tensor<{b}x{heads}x{d}x{s}xf32>) -> {ts}",
        f"  %c = graph.constant dense<{1 / d ** 0.5:.6e}> : {ts}",
        f"  %sc = graph.mul %qk, %c : {ts}",
        f"  %mb = graph.broadcast %mask dims [0, 1, 2, 3] : (tensor<{b}x1x1x{s}xf32>) -> {ts}",
        f"  %x = graph.add %sc, %mb : {ts}",
        f"  %mx = graph.reduce max %x dims [3] : ({ts}) -> {tr}",
        f"  %mxb = graph.broadcast %mx dims [0, 1, 2] : ({tr}) -> {ts}",
        f"  %sh = graph.sub %x, %mxb : {ts}",
        f"  %e = graph.exp %sh : {ts}",
        f"  %sm = graph.reduce sum %e dims [3] : ({ts}) -> {tr}",
        f"  %smb = graph.broadcast %sm dims [0, 1, 2] : ({tr}) -> {ts}",
        f"  %p = graph.div %e, %smb : {ts}",
        f"  %o = graph.dot %p, %v_h : ({ts}, {th}) -> {th}",
        f"  func.return %o : {th}",
    ]
    return f"func.func @attn({', '.join(args)}) -> {th} {{\n" + "\n".join(lines) + "\n}\n"


def _run(text: str, options: PipelineOptions):
    module = parse_module(text, "<test>")
    scheduled = lower(module, options, until="stitch-codegen")
    (k,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    assert isinstance(k.params, AttentionParamsAttr)
    lowered = lower(module, options)
    rng = np.random.default_rng(0)
    inputs = []
    for t in module.body.block.ops.first.function_type.inputs.data:
        inputs.append(rng.standard_normal(tuple(t.get_shape())).astype(np.float32))
    got, stats = execute(lowered, inputs)
    (want,) = run(module, inputs)
    scale = 100.0 if options.precision == "tf32" else 1.0
    assert compare(got[0], want, scale=scale).ok
    return k, lowered, stats


@pytest.mark.parametrize("precision", ["tf32", "fp32"])  # the mma schedule, the warp schedule
def test_a_bias_of_the_staged_tiles_is_loaded_once_per_thread(precision):
    b, s, heads, d = 1, 128, 2, 64
    options = PipelineOptions(fusion="stitch", gpu="A100", precision=precision)
    k, lowered, stats = _run(attention_with_bias(b, s, heads, d), options)
    p = k.params
    assert isinstance(p, AttentionParamsAttr) and p.mma == (precision == "tf32")
    # the biases' loads, one per bias, outside every loop of the kernel
    (f,) = [op for op in lowered.walk() if isinstance(op, gpu.FuncOp) and op.is_kernel]
    args = f.body.blocks[0].args  # the kernel's operands first, flat
    biases = [a for a, v in zip(args, k.operands) if v.type.get_shape() == (heads * d,)]
    assert len(biases) == 3
    loads = [op for op in f.walk() if isinstance(op, memref.LoadOp) and op.memref in biases]
    assert len(loads) == 3
    for op in loads:
        parent = op.parent_op()
        while parent is not f:
            assert not isinstance(parent, scf.ForOp)
            parent = parent.parent_op()
    # the same kernel without the biases requests as many loads but for one element of
    # each bias per thread
    k0, _, plain = _run(attention_with_bias(b, s, heads, d, bias=False), options)
    assert k0.params == p
    (gx, gy, gz), (bx, by, bz) = k.launch()
    threads = gx * gy * gz * bx * by * bz
    assert stats.global_load_bytes - plain.global_load_bytes == threads * 3 * 4
