"""RECom-like recommendation models: N embedding columns, concatenated, into a small MLP.

Each column is one feature: ids [B, L] (L, the bag length, 1..50), optionally hashed
into the table (`rem` by its row count), gathered from a table of 10..10^6 rows and
dim 4..64, optionally weighted per id, reduced over the bag by sum, mean (a sum scaled
by 1/L) or max. The columns are concatenated with a dense feature block, and an MLP
(dot, bias, relu, dot, bias, sigmoid) gives one score per example:

    python examples/recom/generate.py 100 --out /tmp/recom100.mlir         # graph dialect
    python examples/recom/generate.py 100 --onnx /tmp/recom100.onnx        # the same model as ONNX
    python examples/recom/generate.py 1000 --batch '?' --max-rows 1000     # `?` batch, small tables

`--ragged` gives the share of ragged columns (EmbeddingBag with offsets; .mlir only).
`--max-rows` caps the table sizes (tests keep tables small; the full range goes to
10^6 rows, 256 MB for one f32 table of dim 64, which is fine for compiling and for the
cost model but not for the simulator).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass

KINDS = ("sum", "mean", "max")
DIMS = (4, 8, 16, 32, 64)
DENSE = 13  # dense features, as in Criteo/DLRM
HIDDEN = 64
RAGGED = 0.1  # the share of ragged columns the command line draws by default


@dataclass(frozen=True)
class ColumnSpec:
    rows: int
    dim: int
    bag: int
    kind: str
    hashed: bool
    weighted: bool
    # a ragged bag (EmbeddingBag with offsets): ids [B * bag] of all examples' bags and
    # offsets [B], reduced by graph.segment_reduce; `bag` is then the mean bag length
    ragged: bool = False


def model_spec(n: int, seed: int = 0, max_rows: int = 10**6, ragged: float = 0.0) -> list[ColumnSpec]:
    """N columns drawn reproducibly: table rows log-uniform in 10..max_rows, dims 4..64,
    bags 1..50 (short bags more likely), a third each sum/mean/max, 30% hashed, 20% weighted,
    a `ragged` share with ragged bags (drawn apart: the other draws do not change)."""
    rng = random.Random(seed)
    rag = random.Random(seed + 7919)
    out = []
    for _ in range(n):
        rows = int(round(10 ** rng.uniform(1, math.log10(max(10, max_rows)))))
        bag = min(50, max(1, int(round(rng.expovariate(1 / 8)))))
        out.append(ColumnSpec(rows, rng.choice(DIMS), bag, rng.choice(KINDS), rng.random() < 0.3, rng.random() < 0.2,
                              rag.random() < ragged))
    return out


def _hashed(i: int, c: ColumnSpec, ids_t: str, dynamic: bool, lines: list[str]) -> str:
    """Column i's ids into its table: hashed (`rem` by the table's rows, a splat; a `?`
    shape takes it by a broadcast like the ids) or as they are."""
    ids = f"%ids{i}"
    if not c.hashed:
        return ids
    if dynamic:
        lines.append(f"  %m{i} = graph.constant dense<{c.rows}> : tensor<i32>")
        lines.append(f"  %mb{i} = graph.broadcast %m{i} dims [] like {ids} : (tensor<i32>, {ids_t}) -> {ids_t}")
        lines.append(f"  %h{i} = graph.rem {ids}, %mb{i} : {ids_t}")
    else:
        lines.append(f"  %m{i} = graph.constant dense<{c.rows}> : {ids_t}")
        lines.append(f"  %h{i} = graph.rem {ids}, %m{i} : {ids_t}")
    return f"%h{i}"


def _ragged_column(i: int, c: ColumnSpec, b: str, args: list[str], lines: list[str]) -> tuple[str, str]:
    """A ragged column's ops (ids of all bags, `?` with a `?` batch; offsets per
    example): its value and type for the concat."""
    n = "?" if b == "?" else str(int(b) * c.bag)
    ids_t, off_t = f"tensor<{n}xi32>", f"tensor<{b}xi32>"
    args += [f"%ids{i}: {ids_t}", f"%off{i}: {off_t}", f"%t{i}: tensor<{c.rows}x{c.dim}xf32>"]
    ids = _hashed(i, c, ids_t, n == "?", lines)
    e_t = f"tensor<{n}x{c.dim}xf32>"
    lines.append(f"  %e{i} = graph.gather %t{i}, {ids} : (tensor<{c.rows}x{c.dim}xf32>, {ids_t}) -> {e_t}")
    e = f"%e{i}"
    if c.weighted:
        w_t = f"tensor<{n}xf32>"
        args.append(f"%w{i}: {w_t}")
        if n == "?":
            lines.append(f"  %wb{i} = graph.broadcast %w{i} dims [0] like %e{i} : ({w_t}, {e_t}) -> {e_t}")
        else:
            lines.append(f"  %wb{i} = graph.broadcast %w{i} dims [0] : ({w_t}) -> {e_t}")
        lines.append(f"  %we{i} = graph.mul {e}, %wb{i} : {e_t}")
        e = f"%we{i}"
    r_t = f"tensor<{b}x{c.dim}xf32>"
    lines.append(f"  %r{i} = graph.segment_reduce {c.kind} {e}, %off{i} : ({e_t}, {off_t}) -> {r_t}")
    return f"%r{i}", r_t


def to_mlir(cols: list[ColumnSpec], batch: int | str = 8, name: str = "recom", features: bool = False) -> str:
    """The model in the graph dialect; `batch` an int or '?' (the batch of every column).
    `features`: return the concatenated features too (what the embedding layer computes,
    before the MLP squashes it into one score)."""
    b = str(batch)
    dyn = b == "?"
    args, lines = [], []
    ref = None  # a value of shape [B, DENSE] that dynamic broadcasts take their batch from
    args.append(f"%dense: tensor<{b}x{DENSE}xf32>" + (' {fsir.runtime_shape = array<i64: 8, 13>}' if dyn else ""))
    ref = "%dense"
    outs = ["%dense"]
    out_types = [f"tensor<{b}x{DENSE}xf32>"]
    for i, c in enumerate(cols):
        if c.ragged:
            out, r_t = _ragged_column(i, c, b, args, lines)
            outs.append(out)
            out_types.append(r_t)
            continue
        ids_t = f"tensor<{b}x{c.bag}xi32>"
        args.append(f"%ids{i}: {ids_t}")
        args.append(f"%t{i}: tensor<{c.rows}x{c.dim}xf32>")
        ids = _hashed(i, c, ids_t, dyn, lines)
        e_t = f"tensor<{b}x{c.bag}x{c.dim}xf32>"
        lines.append(f"  %e{i} = graph.gather %t{i}, {ids} : (tensor<{c.rows}x{c.dim}xf32>, {ids_t}) -> {e_t}")
        e = f"%e{i}"
        if c.weighted:
            w_t = f"tensor<{b}x{c.bag}xf32>"
            args.append(f"%w{i}: {w_t}")
            like = f" like %e{i}" if dyn else ""
            lines.append(f"  %wb{i} = graph.broadcast %w{i} dims [0, 1]{like} : "
                         + (f"({w_t}, {e_t}) -> {e_t}" if dyn else f"({w_t}) -> {e_t}"))
            lines.append(f"  %we{i} = graph.mul {e}, %wb{i} : {e_t}")
            e = f"%we{i}"
        r_t = f"tensor<{b}x{c.dim}xf32>"
        kind = "max" if c.kind == "max" else "sum"
        lines.append(f"  %r{i} = graph.reduce {kind} {e} dims [1] : ({e_t}) -> {r_t}")
        out = f"%r{i}"
        if c.kind == "mean":
            if dyn:
                lines.append(f"  %s{i} = graph.constant dense<{1.0 / c.bag!r}> : tensor<f32>")
                lines.append(f"  %sb{i} = graph.broadcast %s{i} dims [] like %r{i} : (tensor<f32>, {r_t}) -> {r_t}")
                lines.append(f"  %a{i} = graph.mul %r{i}, %sb{i} : {r_t}")
            else:
                lines.append(f"  %s{i} = graph.constant dense<{1.0 / c.bag!r}> : {r_t}")
                lines.append(f"  %a{i} = graph.mul %r{i}, %s{i} : {r_t}")
            out = f"%a{i}"
        outs.append(out)
        out_types.append(r_t)
    width = DENSE + sum(c.dim for c in cols)
    x_t = f"tensor<{b}x{width}xf32>"
    lines.append(f"  %x = graph.concat {', '.join(outs)} dim 1 : ({', '.join(out_types)}) -> {x_t}")
    args += [f"%mlp_w1: tensor<{width}x{HIDDEN}xf32>", f"%mlp_b1: tensor<{HIDDEN}xf32>",
             f"%mlp_w2: tensor<{HIDDEN}x1xf32>", "%mlp_b2: tensor<1xf32>"]
    h_t, y_t = f"tensor<{b}x{HIDDEN}xf32>", f"tensor<{b}x1xf32>"
    lines.append(f"  %d1 = graph.dot %x, %mlp_w1 : ({x_t}, tensor<{width}x{HIDDEN}xf32>) -> {h_t}")
    like = " like %d1" if dyn else ""
    lines.append(f"  %bb1 = graph.broadcast %mlp_b1 dims [1]{like} : "
                 + (f"(tensor<{HIDDEN}xf32>, {h_t}) -> {h_t}" if dyn else f"(tensor<{HIDDEN}xf32>) -> {h_t}"))
    lines.append(f"  %z1 = graph.add %d1, %bb1 : {h_t}")
    if dyn:
        lines.append("  %zero = graph.constant dense<0.0> : tensor<f32>")
        lines.append(f"  %zb = graph.broadcast %zero dims [] like %z1 : (tensor<f32>, {h_t}) -> {h_t}")
        lines.append(f"  %relu = graph.max %z1, %zb : {h_t}")
    else:
        lines.append(f"  %zero = graph.constant dense<0.0> : {h_t}")
        lines.append(f"  %relu = graph.max %z1, %zero : {h_t}")
    lines.append(f"  %d2 = graph.dot %relu, %mlp_w2 : ({h_t}, tensor<{HIDDEN}x1xf32>) -> {y_t}")
    like = " like %d2" if dyn else ""
    lines.append(f"  %bb2 = graph.broadcast %mlp_b2 dims [1]{like} : "
                 + (f"(tensor<1xf32>, {y_t}) -> {y_t}" if dyn else f"(tensor<1xf32>) -> {y_t}"))
    lines.append(f"  %z2 = graph.add %d2, %bb2 : {y_t}")
    lines.append(f"  %y = graph.sigmoid %z2 : {y_t}")
    lines.append(f"  func.return %y, %x : {y_t}, {x_t}" if features else f"  func.return %y : {y_t}")
    head = (f"// A RECom-like model: {len(cols)} embedding columns + {DENSE} dense features -> "
            f"concat [{b} x {width}] -> MLP {width}-{HIDDEN}-1 (examples/recom/generate.py)\n")
    del ref
    result = f"({y_t}, {x_t})" if features else y_t
    return head + f"func.func @{name}(" + ", ".join(args) + f") -> {result} {{\n" + "\n".join(lines) + "\n}\n"


def to_onnx(cols: list[ColumnSpec], batch: int | str = 8, name: str = "recom", features: bool = False):
    """The model as an ONNX ModelProto (opset 17): Mod, Gather, Mul, ReduceSum/Mean/Max
    over axis 1, Concat, MatMul, Add, Relu, Sigmoid; a '?' batch is the dim_param 'B'.
    Tables are initializers of zeros-free random values (seeded)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if any(c.ragged for c in cols):
        raise ValueError("ONNX has no ragged bag (EmbeddingBag/SparseSegmentSum with offsets) in its standard "
                         "domain: ragged columns are .mlir only")
    rng = np.random.default_rng(0)
    b = "B" if str(batch) == "?" else int(batch)
    inputs = [helper.make_tensor_value_info("dense", TensorProto.FLOAT, [b, DENSE])]
    nodes, inits = [], []
    outs = ["dense"]
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes1")
    inits.append(axes)
    for i, c in enumerate(cols):
        inputs.append(helper.make_tensor_value_info(f"ids{i}", TensorProto.INT32, [b, c.bag]))
        inits.append(numpy_helper.from_array(rng.standard_normal((c.rows, c.dim)).astype(np.float32), f"t{i}"))
        ids = f"ids{i}"
        if c.hashed:
            inits.append(numpy_helper.from_array(np.array(c.rows, np.int32), f"m{i}"))
            nodes.append(helper.make_node("Mod", [ids, f"m{i}"], [f"h{i}"]))
            ids = f"h{i}"
        nodes.append(helper.make_node("Gather", [f"t{i}", ids], [f"e{i}"], axis=0))
        e = f"e{i}"
        if c.weighted:
            inputs.append(helper.make_tensor_value_info(f"w{i}", TensorProto.FLOAT, [b, c.bag]))
            nodes.append(helper.make_node("Unsqueeze", [f"w{i}", "axes2"], [f"wu{i}"]))
            nodes.append(helper.make_node("Mul", [e, f"wu{i}"], [f"we{i}"]))
            e = f"we{i}"
        op = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax"}[c.kind]
        if op == "ReduceSum":  # an input since opset 13; the others' axes are attributes until opset 18
            nodes.append(helper.make_node(op, [e, "axes1"], [f"r{i}"], keepdims=0))
        else:
            nodes.append(helper.make_node(op, [e], [f"r{i}"], axes=[1], keepdims=0))
        outs.append(f"r{i}")
    if any(c.weighted for c in cols):
        inits.append(numpy_helper.from_array(np.array([2], np.int64), "axes2"))
    width = DENSE + sum(c.dim for c in cols)
    nodes.append(helper.make_node("Concat", outs, ["x"], axis=1))
    w1 = (rng.standard_normal((width, HIDDEN)) / math.sqrt(width)).astype(np.float32)
    inits += [numpy_helper.from_array(w1, "mlp_w1"),
              numpy_helper.from_array(np.zeros(HIDDEN, np.float32), "mlp_b1"),
              numpy_helper.from_array((rng.standard_normal((HIDDEN, 1)) / 8).astype(np.float32), "mlp_w2"),
              numpy_helper.from_array(np.zeros(1, np.float32), "mlp_b2")]
    nodes += [helper.make_node("MatMul", ["x", "mlp_w1"], ["d1"]), helper.make_node("Add", ["d1", "mlp_b1"], ["z1"]),
              helper.make_node("Relu", ["z1"], ["h1"]), helper.make_node("MatMul", ["h1", "mlp_w2"], ["d2"]),
              helper.make_node("Add", ["d2", "mlp_b2"], ["z2"]), helper.make_node("Sigmoid", ["z2"], ["y"])]
    outs_info = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, 1])]
    if features:
        outs_info.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, width]))
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outs_info, inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("columns", type=int)
    p.add_argument("--batch", default="8", help="an int, or '?' for a dynamic batch")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-rows", type=int, default=10**6)
    p.add_argument("--out", help="the .mlir file (default: stdout)")
    p.add_argument("--onnx", help="also write the model as ONNX here")
    p.add_argument("--features", action="store_true", help="return the concatenated features too")
    p.add_argument("--ragged", type=float, default=None,
                   help=f"the share of ragged columns (default {RAGGED}; 0 with --onnx: ONNX cannot express them)")
    a = p.parse_args(argv)
    batch: int | str = a.batch if a.batch == "?" else int(a.batch)
    ragged = a.ragged if a.ragged is not None else 0.0 if a.onnx else RAGGED
    if a.onnx and ragged > 0:
        p.error("ONNX has no ragged bag op in its standard domain: ragged columns are .mlir only (--ragged 0)")
    cols = model_spec(a.columns, a.seed, a.max_rows, ragged)
    text = to_mlir(cols, batch, features=a.features)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    elif not a.onnx:
        sys.stdout.write(text)
    if a.onnx:
        import onnx

        onnx.save(to_onnx(cols, batch, features=a.features), a.onnx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
