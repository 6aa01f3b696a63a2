"""Property tests over random graph-dialect functions (fsir.testing.random_graphs):
the text form is stable, every graph runs in the reference interpreter, and the graph
passes (applied in-process) never change what a graph computes."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from io import StringIO

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from fsir.dialects import graph
from fsir.ir import verify
from fsir.parse import make_context, parse_module
from fsir.runtime.reference import run
from fsir.testing.paths import LIT_TESTS
from fsir.testing.random_graphs import GraphOptions, graphs, random_graph, random_inputs
from fsir.transforms.canonicalize import GraphCanonicalizePass
from fsir.transforms.shape_inference import ShapeInferencePass

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Half of the inputs and some known result dims declared `?`, so shape inference has work.
GRAPHS = graphs(dynamic=0.25)

PASSES = {
    "graph-canonicalize": GraphCanonicalizePass,
    "cse": CommonSubexpressionElimination,
    "dce": DeadCodeElimination,
    "graph-shape-inference": ShapeInferencePass,
}


def print_ir(module: ModuleOp, generic: bool = False) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def evaluate(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    # Overflow, 0/0 and friends are legitimate results of random graphs; they only have
    # to be the same before and after a pass.
    with np.errstate(all="ignore"):
        return run(module, inputs)


def assert_same_results(before: list[np.ndarray], after: list[np.ndarray]) -> None:
    assert len(before) == len(after)
    for i, (a, b) in enumerate(zip(before, after)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"output {i}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b, err_msg=f"output {i}")
        else:  # NaN where NaN, inf where inf, close elsewhere (f16/bf16 compared in f32)
            np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-6, atol=0,
                                       equal_nan=True, err_msg=f"output {i}")


# -- text form -----------------------------------------------------------------------


@PROPERTY
@given(GRAPHS)
def test_print_parse_print_is_stable(text):
    printed = print_ir(parse_module(text, "random.mlir"))
    assert print_ir(parse_module(printed, "printed.mlir")) == printed


@PROPERTY
@given(GRAPHS)
def test_generic_form_round_trips(text):
    module = parse_module(text, "random.mlir")
    generic = print_ir(module, generic=True)
    assert '"graph.' in generic
    assert print_ir(parse_module(generic, "generic.mlir")) == print_ir(module)


# -- semantics -----------------------------------------------------------------------


@PROPERTY
@given(GRAPHS)
def test_reference_runs_every_graph(text):
    module = parse_module(text, "random.mlir")
    f = module.ops.first
    results = evaluate(module, random_inputs(module, np.random.default_rng(0)))
    assert len(results) == len(f.function_type.outputs.data)
    for value, t in zip(results, f.function_type.outputs.data):
        assert value.dtype == graph.numpy_dtype(t.element_type)
        assert graph.shapes_compatible(value.shape, t.get_shape())


@pytest.mark.parametrize("pipeline", [
    ["graph-canonicalize"], ["cse"], ["dce"], ["graph-shape-inference"],
    ["graph-shape-inference", "graph-canonicalize", "cse", "dce"],
], ids=lambda p: ",".join(p))
@PROPERTY
@given(text=GRAPHS)
def test_passes_preserve_results(pipeline, text):
    ctx = make_context()
    module = parse_module(text, "random.mlir", ctx)
    inputs = random_inputs(module, np.random.default_rng(1))
    before = evaluate(module, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # xDSL's own API deprecations
        for name in pipeline:
            PASSES[name]().apply(ctx, module)
            verify(module)
    assert_same_results(before, evaluate(module, inputs))
    # The next tool in a pipeline reads what the pass printed: it must mean the same.
    assert_same_results(before, evaluate(parse_module(print_ir(module), "after.mlir"), inputs))


@settings(max_examples=25, deadline=None)
@given(graphs(dynamic=0.5))
def test_shape_inference_never_loses_static_dims(text):
    ctx = make_context()
    module = parse_module(text, "random.mlir", ctx)
    before = [op.results[0].type for op in module.walk() if isinstance(op, graph.GraphOp)]
    ShapeInferencePass().apply(ctx, module)
    after = [op.results[0].type for op in module.walk() if isinstance(op, graph.GraphOp)]
    for b, a in zip(before, after, strict=True):
        for db, da in zip(b.get_shape(), a.get_shape(), strict=True):
            assert db == graph.DYN or db == da


# -- the generator itself --------------------------------------------------------------


def test_random_graph_is_deterministic():
    assert random_graph(7) == random_graph(7)
    assert random_graph(7) != random_graph(8)


def test_generated_graphs_cover_every_op():
    texts = "".join(random_graph(seed, dynamic=0.3) for seed in range(300))
    used = set(re.findall(r"graph\.(\w+)", texts))
    expected = set(graph.ELEMENTWISE) | {
        "compare", "select", "convert", "constant", "iota", "broadcast", "reshape",
        "transpose", "slice", "concat", "reduce", "gather", "dot",
    }
    assert expected <= used, f"never generated: {sorted(expected - used)}"
    for kind in graph.ReduceKind:
        assert f"graph.reduce {kind}" in texts
    for elem in ("f16", "bf16", "i32", "i64", "i1"):
        assert f"x{elem}>" in texts
    assert "?" in texts and "fsir.runtime_shape" in texts
    assert "tensor<f" in texts  # rank-0 tensors


def test_static_by_default():
    assert not any("?" in random_graph(seed) for seed in range(50))


def test_sizes_respect_options():
    options = dict(max_ops=6, max_dim=20, max_elements=300)
    for seed in range(100):
        text = random_graph(seed, **options)
        assert text.count("= graph.") <= 6 + 6  # helper ops (abs + offset, partners) may follow the last op
        for dims in re.findall(r"tensor<((?:\d+x)*)\w+>", text):
            sizes = [int(d) for d in dims.split("x") if d]
            assert np.prod(sizes, dtype=np.int64) <= options["max_elements"], text


def test_random_inputs_keep_gather_ids_in_range():
    seen = 0
    for seed in range(200):
        module = parse_module(random_graph(seed), "random.mlir")
        inputs = random_inputs(module, np.random.default_rng(seed))
        args = module.ops.first.body.block.args
        for op in module.walk():
            if isinstance(op, graph.GatherOp) and op.ids in args:
                ids = inputs[list(args).index(op.ids)]
                assert ids.min(initial=0) >= 0 and ids.max(initial=0) < op.table.type.get_shape()[0]
                seen += 1
    assert seen > 5


def test_random_inputs_follow_runtime_shape():
    text = random_graph(3, dynamic=1.0)
    module = parse_module(text, "random.mlir")
    recorded = re.findall(r"fsir.runtime_shape = array<i64: ([\d, ]+)>", text)
    assert recorded
    shapes = [tuple(x.shape) for x in random_inputs(module, np.random.default_rng(0))]
    for r in recorded:
        assert tuple(int(s) for s in r.split(", ")) in shapes


def test_fs_opt_accepts_generated_graphs(tmp_path):
    """The command-line verifier (and a pass pipeline) accept what the generator makes."""
    funcs = [random_graph(seed, dynamic=0.2 * (seed % 2), name=f"g{seed}") for seed in range(30)]
    path = tmp_path / "random.mlir"
    path.write_text("\n".join(funcs))
    proc = subprocess.run(
        [sys.executable, "-m", "fsir.tools.fs_opt", str(path), "-p",
         "graph-shape-inference,graph-canonicalize,cse,dce"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("func.func @g") == 30


def test_options_are_validated_by_name():
    with pytest.raises(TypeError):
        random_graph(0, max_opz=3)
    assert GraphOptions().max_dim == 70


def test_command_line_prints_parsable_graphs(capsys):
    from fsir.testing.random_graphs import main

    main(["--seed", "4", "--count", "3", "--max-ops", "5", "--dynamic", "0.3"])
    module = parse_module(capsys.readouterr().out, "cli.mlir")
    assert [f.sym_name.data for f in module.ops] == ["g4", "g5", "g6"]


def test_roundtrip_lit_test_covers_every_graph_op():
    """A new graph op (e.g. a new ELEMENTWISE row) needs a line in lit_tests/graph/roundtrip.mlir."""

    text = (LIT_TESTS / "graph" / "roundtrip.mlir").read_text()
    missing = [op.name for op in graph.Graph.operations if f"{op.name} " not in text]
    assert not missing, f"not in roundtrip.mlir: {missing}"
