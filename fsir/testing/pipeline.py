"""Differential testing of the compilation chain: graph IR → PTX → simulator vs. the
numpy reference interpreter, plus ptxas for sm_80 and sm_90; the schedule kernels
stitch-codegen makes of a graph, and the global traffic a compiled graph causes.

Tolerances are fsir.runtime.compare's (documented there: f32 rtol 2e-4, f16 2e-2,
bf16 4e-2; integers and booleans exact), widened by `scale` for long reductions whose
summation order differs from numpy's pairwise sum.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from fsir.codegen.mappings import mapping_of
from fsir.codegen.summary import Summary
from fsir.dialects.graph import numpy_dtype
from fsir.dialects.schedule import KernelOp
from fsir.gpuspec import gpu_spec
from fsir.parse import parse_module
from fsir.pipeline import PipelineOptions, lower
from fsir.runtime.compare import compare
from fsir.runtime.executor import execute
from fsir.runtime.reference import find_function, run
from fsir.sim.stats import LaunchStats

ARCHS = ("sm_80", "sm_90")


@functools.cache
def have_ptxas() -> bool:
    from fsir.ptx.ptxas import find_ptxas

    return find_ptxas() is not None


def make_input(t, shape, rng, kind: str = "normal") -> np.ndarray:
    """Random data of element type `t`; `kind` keeps math domains valid:
    normal, positive, small (|x| < 2), ids (may be out of range), int (with zeros)."""
    dtype = numpy_dtype(t)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo, hi = {"ids": (-3, 12), "positive": (1, 9)}.get(kind, (-9, 10))
        return rng.integers(lo, hi, size=shape).astype(dtype)
    if kind == "positive":
        x = rng.uniform(0.5, 2.0, size=shape)
    elif kind == "small":
        x = rng.uniform(-2.0, 2.0, size=shape)
    else:
        x = rng.standard_normal(shape)
    return np.asarray(x.astype(np.float32).astype(dtype))


def input_types(module: ModuleOp) -> list[TensorType]:
    """The tensor types of the function's arguments."""
    types = []
    for t in find_function(module).function_type.inputs.data:
        assert isinstance(t, TensorType), f"argument of type {t}: the graph functions take tensors"
        types.append(t)
    return types


def check(text: str, shapes: list[tuple[int, ...]] | None = None, kinds: list[str] | None = None,
          fusion: str = "none", scale: float = 1.0, seed: int = 0, ptxas: bool = True, inputs=None,
          rows: str = "auto", subroots: str = "auto", vector: str | int = "auto", gemm: str = "auto"):
    """Compile `text`, run it on the simulator, compare with the reference; returns the
    lowered module. `shapes` gives concrete shapes (needed for `?` dims)."""
    module = parse_module(text, "<test>")
    types = input_types(module)
    rng = np.random.default_rng(seed)
    if inputs is None:
        shapes = shapes or [tuple(t.get_shape()) for t in types]
        kinds = kinds or ["normal"] * len(types)
        inputs = [make_input(t.element_type, s, rng, k) for t, s, k in zip(types, shapes, kinds)]
    options = PipelineOptions.parse(fusion=fusion, rows=rows, subroots=subroots, vector=vector, gemm=gemm)
    lowered = lower(module, options)
    check_dominance(lowered)
    got, _ = execute(lowered, inputs)
    want = run(module, inputs)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"output {i}: dtype {g.dtype} != {w.dtype}"
        c = compare(g, w, scale=scale)
        assert c.ok, f"output {i}: {c}\ngot  {g.ravel()[:16]}\nwant {w.ravel()[:16]}"
    if ptxas:
        assemble_all(lowered)
    return lowered


def check_dominance(module) -> None:
    """Every operand is defined before its use in the same block or an enclosing one
    (xDSL's verifier does not check this; PTX from such IR reads undefined registers)."""
    from xdsl.ir import BlockArgument

    def defined_before(value, op) -> bool:
        if isinstance(value, BlockArgument):
            block = value.block
        else:
            block = value.owner.parent_block()
        user = op
        while user is not None:
            if user.parent_block() is block:
                if isinstance(value, BlockArgument):
                    return True
                return block.get_operation_index(value.owner) < block.get_operation_index(user)
            user = user.parent_op()
        return False

    for op in module.walk():
        for v in op.operands:
            assert defined_before(v, op), f"{v} does not dominate its use in '{op.name}'"


def assemble_all(lowered) -> None:
    assert have_ptxas(), "ptxas not found: pip install -e '.[test]' installs it"
    from fsir.ptx import print_ptx
    from fsir.ptx.ptxas import assemble

    for arch in ARCHS:
        result = assemble(print_ptx(lowered, arch=arch), arch)
        assert result.ok, f"ptxas {arch}: {result.errors}"


def schedule_kernels(text: str, rows: str = "auto", subroots: str = "auto") -> list[KernelOp]:
    """The schedule kernels stitch-codegen makes of a graph."""
    options = PipelineOptions.parse(fusion="stitch", rows=rows, subroots=subroots)
    module = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    return [op for op in module.walk() if isinstance(op, KernelOp)]


def scheduled_kernel(text: str, options: PipelineOptions) -> tuple[KernelOp, Summary]:
    """The one schedule kernel stitch-codegen makes of `text` under `options`, and its
    summary on `options.gpu`."""
    scheduled = lower(parse_module(text, "<test>"), options, until="stitch-codegen")
    (kernel,) = [op for op in scheduled.walk() if isinstance(op, KernelOp)]
    return kernel, mapping_of(kernel).summarize(kernel, gpu_spec(options.gpu))


def simulate_kernel(text: str, options: PipelineOptions, shapes: Sequence[tuple[int, ...]],
                    dtype: type[np.generic]) -> tuple[KernelOp, Summary, ModuleOp, LaunchStats]:
    """`scheduled_kernel`'s kernel and summary, the lowered module, and the simulator's
    counters of one run on standard-normal inputs of `shapes` (seed 0) cast to `dtype`:
    what the cost tests hold a summary against."""
    kernel, summary = scheduled_kernel(text, options)
    lowered = lower(parse_module(text, "<test>"), options)
    rng = np.random.default_rng(0)
    _, stats = execute(lowered, [rng.standard_normal(shape).astype(dtype) for shape in shapes])
    assert stats is not None, "the module launched no kernel"
    return kernel, summary, lowered, stats


def measure(text: str, atol: float = 1e-4, subroots: str = "auto"):
    """Compile `text` with stitch fusion, run it on the simulator with standard-normal
    f32 inputs and check it against the reference (rtol 1e-4, `atol`); returns the
    lowered module, the simulator's counters and the bytes of reading every input and
    writing every output once (the bound fused kernels aim at)."""
    module = parse_module(text, "<test>")
    types = input_types(module)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(tuple(t.get_shape())).astype(np.float32) for t in types]
    lowered = lower(parse_module(text, "<test>"), PipelineOptions.parse(fusion="stitch", subroots=subroots))
    outputs, stats = execute(lowered, inputs)
    for got, want in zip(outputs, run(module, inputs)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)
    bound = sum(a.nbytes for a in inputs) + sum(np.asarray(o).nbytes for o in outputs)
    return lowered, stats, bound
