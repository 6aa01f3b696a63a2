"""The `attention` mapping: softmax(Q·Kᵀ·scale + mask)·V recognised by the explorer and
run as one FlashAttention-style kernel, on the simulator against the numpy reference
(f32, f16, bf16; additive, causal or no mask; sequence lengths that are not multiples
of the tiles), assembled by ptxas; and what stays as before when the pattern does not
match."""

from __future__ import annotations

import math

import pytest
from xdsl.dialects import memref

from fsir.codegen.mappings.attention import find_attention
from fsir.dialects import graph
from fsir.dialects.schedule import AttentionParamsAttr, KernelOp, Mapping
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.testing.paths import EXAMPLES
from fsir.testing.pipeline import check, schedule_kernels


def attention(b: int, h: int, sq: int, sk: int, d: int, t: str = "f32", mask: str = "none",
              dv: int | None = None, probs_out: bool = False, reciprocal: bool = False,
              nan_to_zero: bool = False) -> str:
    """softmax(q·kᵀ/√d + mask)·v over heads, written as the importers spell it: e / sum
    (or e * (1 / sum), XLA's optimised form), then `select(p != p, 0, p)` with
    `nan_to_zero` (PyTorch's ONNX export)."""
    dv = d if dv is None else dv
    s4 = f"tensor<{b}x{h}x{sq}x{sk}x{t}>"
    s3 = f"tensor<{b}x{h}x{sq}x{t}>"
    args = [f"%q: tensor<{b}x{h}x{sq}x{d}x{t}>", f"%k: tensor<{b}x{h}x{sk}x{d}x{t}>",
            f"%v: tensor<{b}x{h}x{sk}x{dv}x{t}>"]
    if mask == "additive":
        args.append(f"%mask: tensor<{b}x1x1x{sk}x{t}>")
    out_t = f"tensor<{b}x{h}x{sq}x{dv}x{t}>"
    results = f"({out_t}, {s4})" if probs_out else out_t
    lines = [f"func.func @attn({', '.join(args)}) -> {results} {{",
             f"  %kt = graph.transpose %k perm [0, 1, 3, 2] : (tensor<{b}x{h}x{sk}x{d}x{t}>) -> "
             f"tensor<{b}x{h}x{d}x{sk}x{t}>",
             f"  %s = graph.dot %q, %kt : (tensor<{b}x{h}x{sq}x{d}x{t}>, tensor<{b}x{h}x{d}x{sk}x{t}>) -> {s4}",
             f"  %scale = graph.constant dense<{1 / d ** 0.5:.6e}> : {s4}",
             f"  %x0 = graph.mul %s, %scale : {s4}"]
    x = "%x0"
    if mask == "additive":
        lines += [f"  %mb = graph.broadcast %mask dims [0, 1, 2, 3] : (tensor<{b}x1x1x{sk}x{t}>) -> {s4}",
                  f"  %x = graph.add %x0, %mb : {s4}"]
        x = "%x"
    elif mask == "causal":
        m2, b2 = f"tensor<{sq}x{sk}xi32>", f"tensor<{sq}x{sk}xi1>"
        lines += [f"  %row = graph.iota dim 0 : {m2}",
                  f"  %col = graph.iota dim 1 : {m2}",
                  f"  %keep = graph.compare ge %row, %col : ({m2}, {m2}) -> {b2}",
                  f"  %keep4 = graph.broadcast %keep dims [2, 3] : ({b2}) -> tensor<{b}x{h}x{sq}x{sk}xi1>",
                  # -1e30 is -inf in f16 (it overflows), finite in f32 and bf16
                  f"  %ninf = graph.constant dense<-1.0e30> : tensor<{b}x{h}x{sq}x{sk}xf32>",
                  f"  %ninf_t = graph.convert %ninf : (tensor<{b}x{h}x{sq}x{sk}xf32>) -> {s4}",
                  f"  %x = graph.select %keep4, %x0, %ninf_t : (tensor<{b}x{h}x{sq}x{sk}xi1>, {s4}, {s4}) -> {s4}"]
        x = "%x"
    lines += [f"  %mx = graph.reduce max {x} dims [3] : ({s4}) -> {s3}",
              f"  %mxb = graph.broadcast %mx dims [0, 1, 2] : ({s3}) -> {s4}",
              f"  %sh = graph.sub {x}, %mxb : {s4}",
              f"  %e = graph.exp %sh : {s4}",
              f"  %sum = graph.reduce sum %e dims [3] : ({s4}) -> {s3}"]
    if reciprocal:
        lines += [f"  %one = graph.constant dense<1.0> : {s3}",
                  f"  %inv = graph.div %one, %sum : {s3}",
                  f"  %invb = graph.broadcast %inv dims [0, 1, 2] : ({s3}) -> {s4}",
                  f"  %p0 = graph.mul %e, %invb : {s4}"]
    else:
        lines += [f"  %sumb = graph.broadcast %sum dims [0, 1, 2] : ({s3}) -> {s4}",
                  f"  %p0 = graph.div %e, %sumb : {s4}"]
    if nan_to_zero:
        b4 = f"tensor<{b}x{h}x{sq}x{sk}xi1>"
        lines += [f"  %nan = graph.compare ne %p0, %p0 : ({s4}, {s4}) -> {b4}",
                  f"  %zero = graph.constant dense<0.0> : {s4}",
                  f"  %p = graph.select %nan, %zero, %p0 : ({b4}, {s4}, {s4}) -> {s4}"]
    else:
        lines[-1] = lines[-1].replace("%p0 =", "%p =")
    lines += [f"  %o = graph.dot %p, %v : ({s4}, tensor<{b}x{h}x{sk}x{dv}x{t}>) -> {out_t}",
              f"  func.return {'%o, %p' if probs_out else '%o'} : {results.strip('()')}",
              "}"]
    return "\n".join(lines) + "\n"


def attention_kernels(text: str) -> list[KernelOp]:
    return [k for k in schedule_kernels(text) if k.params.MAPPING == Mapping.ATTENTION]


@pytest.mark.parametrize("t,mask,sizes", [
    ("f32", "additive", (2, 2, 40, 40, 16)),   # ragged: 40 keys and rows against 16/32-wide tiles
    ("f32", "causal", (1, 3, 33, 33, 8)),
    ("f32", "none", (2, 1, 16, 48, 32)),       # Sq != Sk
    ("f16", "additive", (1, 2, 37, 37, 16)),
    ("f16", "causal", (2, 1, 32, 32, 16)),
    ("bf16", "additive", (1, 2, 24, 24, 8)),
    ("f32", "recip", (2, 2, 17, 17, 8)),
    ("f16", "nan_to_zero", (1, 2, 16, 20, 8)),
])
def test_attention_is_one_kernel_matching_the_reference(t, mask, sizes):
    forms = {"recip": dict(mask="additive", reciprocal=True), "nan_to_zero": dict(mask="causal", nan_to_zero=True)}
    text = attention(*sizes, t=t, **forms.get(mask, dict(mask=mask)))
    (k,) = attention_kernels(text)
    assert len(schedule_kernels(text)) == 1  # the transpose of k included
    lowered = check(text, fusion="stitch", scale=4.0)
    funcs = [op for op in lowered.walk() if op.name == "gpu.func"]
    assert any(f.sym_name.data == k.sym_name.data for f in funcs)


def test_a_forced_configuration_and_a_value_head_dim_of_its_own():
    text = attention(1, 2, 20, 50, 16, dv=8, mask="additive")
    (k,) = attention_kernels(text)
    p = k.params
    assert isinstance(p, AttentionParamsAttr)
    assert k.launch() == ((-(-20 // p.block_q), 2, 1), (p.threads, 1, 1))
    check(text, fusion="stitch")


def test_the_kernel_writes_no_score_matrix():
    """The host allocates the outputs of the kernels: none as large as one head's
    64 x 64 scores (the output and the transposed k are 2 x 64 x 16 each)."""
    text = attention(1, 2, 64, 64, 16, mask="additive")
    module = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch"))
    sizes = [math.prod(op.results[0].type.get_shape()) for op in module.walk() if isinstance(op, memref.AllocOp)]
    assert sizes and max(sizes) < 64 * 64, sizes


def test_probabilities_read_elsewhere_are_not_an_attention():
    """Returning the probabilities needs them in memory: the explorer fuses as before."""
    text = attention(1, 2, 16, 16, 8, mask="additive", probs_out=True)
    assert attention_kernels(text) == []
    check(text, fusion="stitch")


def test_xla_mode_keeps_its_rules():
    text = attention(1, 2, 16, 16, 8)
    options = PipelineOptions(fusion="xla")
    module = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    assert not [k for k in module.walk() if isinstance(k, KernelOp) and k.params.MAPPING == Mapping.ATTENTION]


def test_the_matcher_finds_the_examples_attention():
    text = (EXAMPLES / "bert_layer.mlir").read_text()
    module = parse_module(text, "bert_layer.mlir")
    ops = [op for op in module.walk() if isinstance(op, graph.GraphOp)]
    m = find_attention(ops)
    assert m is not None and m.sizes == (128, 128, 64, 64) and m.batch == (2, 12)


def test_a_fully_masked_row_gives_zero_with_the_nan_select():
    """Every key of batch entry 0 masked with -inf: the reference's probabilities are
    NaN (-inf - -inf), which `select(p != p, 0, p)` turns into 0; so does the kernel."""
    import numpy as np

    from fsir.testing.pipeline import make_input

    text = attention(2, 2, 8, 24, 8, t="f16", mask="additive", nan_to_zero=True)
    rng = np.random.default_rng(1)
    q, k, v = (make_input(graph.f16, s, rng) for s in ((2, 2, 8, 8), (2, 2, 24, 8), (2, 2, 24, 8)))
    mask = np.zeros((2, 1, 1, 24), np.float16)
    mask[0] = -np.inf
    lowered = check(text, fusion="stitch", inputs=[q, k, v, mask])
    from fsir.runtime.executor import execute

    (out,), _ = execute(lowered, [q, k, v, mask])
    assert np.all(out[0] == 0) and np.all(np.isfinite(out[1])) and np.any(out[1] != 0)


def test_the_causal_attention_example_keeps_its_scores_on_chip():
    """examples/hlo/causal_attention.hlo in stitch mode: no tensor passed between
    kernels or to the host has a 16 x 16 score shape (the attention kernel's output is
    the p·v product with its heads merged back, [2, 16, 4, 16], stored by the kernel:
    `output_transpose`); the scores, the causal mask and the probabilities stay inside
    that kernel."""
    from fsir.analysis.attention import output_transpose
    from fsir.codegen.mappings.attention import AttentionMapping
    from fsir.dialects.schedule import inner_value
    from fsir.pipeline import read_model

    module = lower(read_model(EXAMPLES / "hlo" / "causal_attention.hlo"), PipelineOptions(fusion="stitch"),
                   until="stitch-codegen")
    kernels = [k for k in module.walk() if isinstance(k, KernelOp)]
    (att,) = [k for k in kernels if k.params.MAPPING == Mapping.ATTENTION]
    m = AttentionMapping.match(att)
    sq, sk, _, _ = m.sizes
    assert (sq, sk) == (16, 16)
    t = output_transpose(m.pv)
    assert t is not None and inner_value(att.yielded()[0]).owner is t
    assert graph.shape_of(att.results[0].type) == (2, 16, 4, 16)
    tensors = {v for k in kernels for v in (*k.operands, *k.results)}
    assert all(graph.shape_of(v.type)[-2:] != (sq, sk) for v in tensors)
    assert all(graph.shape_of(v.type)[-2:] != (sq, sk) for v in att.operands)


def test_onnx_attention_nodes_are_one_kernel_matching_onnx():
    """ONNX's Attention node (its importer writes a safe softmax: a row max of -inf
    shifts by 0, a row sum of 0 divides by 1) runs as an attention kernel and matches
    ONNX's expected outputs (the backend test cases)."""
    import warnings

    from fsir.frontend.onnx_import import import_onnx
    from fsir.onnx.conformance import Outcome, node_cases, run_case

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = {c.name: c for c in node_cases() if c.name.startswith("test_attention_4d")}
    for name in ("test_attention_4d", "test_attention_4d_gqa", "test_attention_4d_softcap", "test_attention_4d_fp16"):
        case = cases[name]
        model, _ = case.load()
        module = lower(import_onnx(model.SerializeToString(), name), PipelineOptions(fusion="stitch"),
                       until="stitch-codegen")
        assert [k for k in module.walk() if isinstance(k, KernelOp) and k.params.MAPPING == Mapping.ATTENTION], name
        result = run_case(case)
        assert result.outcome is Outcome.PASSED, (name, result.message)


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_heads_merged_back_are_stored_by_the_attention_kernel(t):
    """A transpose alone reading the output ([B, H, S, D] -> [B, S, H, D], then the
    free reshape to [B, S, H·D], as before BERT's output projection) is the attention
    kernel's: it stores each row at the permuted index, and no copy kernel follows."""
    b, h, s, d = 2, 3, 20, 8
    text = attention(b, h, s, s, d, t=t, mask="additive")
    o_t, m_t = f"tensor<{b}x{h}x{s}x{d}x{t}>", f"tensor<{b}x{s}x{h * d}x{t}>"
    text = text.replace(f"-> {o_t} {{", f"-> {m_t} {{").replace(
        f"  func.return %o : {o_t}",
        f"  %ot = graph.transpose %o perm [0, 2, 1, 3] : ({o_t}) -> tensor<{b}x{s}x{h}x{d}x{t}>\n"
        f"  %om = graph.reshape %ot : (tensor<{b}x{s}x{h}x{d}x{t}>) -> {m_t}\n"
        f"  func.return %om : {m_t}")
    (k,) = attention_kernels(text)
    assert len(schedule_kernels(text)) == 1
    (out,) = k.groups()[0].yielded()
    assert isinstance(out.owner, graph.TransposeOp)
    check(text, fusion="stitch", scale=4.0)


def _forced(monkeypatch, schedule: str) -> None:
    """Only the candidates of one schedule: `warp` (a warp per rows, FMAs) or `mma`."""
    import fsir.codegen.mappings.attention as attention_mapping

    monkeypatch.setattr(attention_mapping, "CANDIDATES", ())
    monkeypatch.setattr(attention_mapping, "WARP_CANDIDATES" if schedule == "mma" else "MMA_CANDIDATES", ())


@pytest.mark.parametrize("t,mask,sizes,kw", [
    ("f32", "causal", (1, 3, 33, 33, 8), {}),           # ragged rows and keys
    ("bf16", "additive", (1, 2, 24, 24, 8), {}),
    ("f32", "additive", (1, 2, 20, 50, 16), dict(dv=40)),  # a value dim of its own, not a multiple of 32
    ("f16", "nan_to_zero", (1, 2, 16, 20, 8), {}),
])
def test_the_warp_schedule_matches_the_reference(monkeypatch, t, mask, sizes, kw):
    _forced(monkeypatch, "warp")
    forms = {"nan_to_zero": dict(mask="causal", nan_to_zero=True)}
    text = attention(*sizes, t=t, **forms.get(mask, dict(mask=mask)), **kw)
    (k,) = attention_kernels(text)
    assert isinstance(k.params, AttentionParamsAttr) and k.params.warp_rows and not k.params.mma
    check(text, fusion="stitch", scale=4.0)


@pytest.mark.parametrize("t,mask,sizes,kw", [
    ("f16", "none", (1, 2, 16, 32, 16), {}),
    ("f16", "additive", (2, 2, 40, 40, 16), {}),         # ragged against 64 x 64 tiles
    ("bf16", "causal", (1, 3, 33, 33, 32), {}),
    ("f16", "additive", (1, 2, 20, 50, 16), dict(dv=24)),
    ("f16", "nan_to_zero", (1, 2, 16, 20, 16), {}),
])
def test_the_tensor_core_schedule_matches_the_reference(monkeypatch, t, mask, sizes, kw):
    _forced(monkeypatch, "mma")
    forms = {"nan_to_zero": dict(mask="causal", nan_to_zero=True)}
    text = attention(*sizes, t=t, **forms.get(mask, dict(mask=mask)), **kw)
    (k,) = attention_kernels(text)
    assert isinstance(k.params, AttentionParamsAttr) and k.params.mma
    lowered = check(text, fusion="stitch", scale=4.0)
    assert any(op.name == "gpu.mma_sync" for op in lowered.walk())


def test_tf32_attention_on_the_tensor_cores():
    """precision=tf32: an f32 attention runs its two products as m16n8k8 tf32 mmas (Q,
    K, P and V rounded to tf32: relative error ~2^-11 per product; the probabilities
    sum to 1, so the output's error is a few 2^-11 of |V|); under the default precision
    it keeps exact FMAs."""
    import numpy as np

    from fsir.runtime.executor import execute
    from fsir.runtime.reference import run

    text = attention(2, 2, 40, 40, 16, mask="additive")
    scheduled = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch", precision="tf32"),
                      until="stitch-codegen")
    kernel = [k for k in scheduled.walk() if isinstance(k, KernelOp) and k.params.MAPPING == Mapping.ATTENTION]
    assert len(kernel) == 1 and isinstance(kernel[0].params, AttentionParamsAttr) and kernel[0].params.mma
    assert not any(isinstance(k.params, AttentionParamsAttr) and k.params.mma for k in attention_kernels(text))
    lowered = lower(parse_module(text, "<test>"), PipelineOptions(fusion="stitch", precision="tf32"))
    assert any(op.name == "gpu.mma_sync" for op in lowered.walk())
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((2, 2, 40, 16), (2, 2, 40, 16), (2, 2, 40, 16),
                                                                   (2, 1, 1, 40))]
    (got,), _ = execute(lowered, inputs)
    (want,) = run(parse_module(text, "<test>"), inputs)
    np.testing.assert_allclose(got, want, rtol=0, atol=16 * 2.0**-11 * 4)
