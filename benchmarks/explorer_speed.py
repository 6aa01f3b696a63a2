"""How fast is the fusion explorer? Synthetic graphs of 2k, 20k (and, opt-in, 200k) ops.

    python benchmarks/explorer_speed.py [--sizes 2000 20000 [200000]] [--kinds chain dense ...]

Each graph is one function built in-process as xDSL IR (parsing text is slower than the
explorer itself). Layered graphs repeat one layer, each reading the one before it
(so the graph is as deep as it is long), of these kinds:

- chain: elementwise ops one after another;
- fanout: a value read by six branches, summed back by a tree of adds;
- reduce: a softmax over each row (two reductions and their broadcasts);
- branches: three independent branches of the layer's input, joined by adds;
- dense: a LayerNorm, two sibling dots of its output (horizontal fusion's case),
  tanh, a third dot and a residual add (GEMM epilogues, prologues, row epilogues);
- mixed: the first four in turn;
- wide: not layered: one third long chains with a row-norm every 16 ops, one third
  hubs each read by 100 short branches summed back, one third embedding-like
  subgraphs (gather, scale, reduce over the sequence, tanh) summed by groups of 16.

Prints per kind and size the ops, the explorer's process CPU time (the best of 3 up to
2k ops; on a shared machine CPU time is the fair one) and ms per op, its work count
(`Exploration.work.steps`, what tests/fusion/test_explorer_scaling.py holds to linear
growth), the kernels the codegen latency-evaluator generated, and checks the targets:
at most 1.5 ms per op at every size, and per kind a time per op at the largest size at
most 1.5x the one at the smallest (linear growth, with room for noise).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, SSAValue

from fsir.frontend.builder import GraphBuilder
from fsir.fusion.explorer import ExplorerOptions, explore

ROWS, COLS = 64, 256
MS_PER_OP = 1.5
LINEAR_SLACK = 1.5


def _sum_tree(b: GraphBuilder, values: list[SSAValue]) -> SSAValue:
    while len(values) > 1:
        nxt = [b.ew("add", values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
        if len(values) % 2:
            nxt.append(values[-1])
        values = nxt
    return values[0]


# -- layered graphs: one layer of each kind, reading the layer before -----------------


def _chain_layer(b: GraphBuilder, x: SSAValue, a: SSAValue) -> SSAValue:
    for op in ("mul", "exp", "add", "neg"):
        x = b.ew(op, x, a) if op in ("mul", "add") else b.ew(op, x)
    return x


def _fanout_layer(b: GraphBuilder, x: SSAValue, a: SSAValue, width: int = 6) -> SSAValue:
    hub = b.ew("exp", x)
    return _sum_tree(b, [b.ew("mul", hub, a) if i % 2 else b.ew("neg", hub) for i in range(width)])


def _reduce_layer(b: GraphBuilder, x: SSAValue, a: SSAValue) -> SSAValue:
    m = b.reduce("max", x, [1])
    e = b.ew("exp", b.ew("sub", x, b.broadcast(m, (ROWS, COLS), [0])))
    s = b.reduce("sum", e, [1])
    return b.ew("div", e, b.broadcast(s, (ROWS, COLS), [0]))


def _branches_layer(b: GraphBuilder, x: SSAValue, a: SSAValue, width: int = 3) -> SSAValue:
    outs = [b.ew(("exp", "tanh", "neg")[i % 3], b.ew("mul", x, a)) for i in range(width)]
    y = outs[0]
    for o in outs[1:]:
        y = b.ew("add", y, o)
    return y


def _dense_layer(b: GraphBuilder, x: SSAValue, a: SSAValue) -> SSAValue:
    w = b.add_arg(TensorType(f32, [COLS, COLS]))
    mean = b.reduce("sum", x, [1])
    xc = b.ew("sub", x, b.broadcast(mean, (ROWS, COLS), [0]))
    var = b.reduce("sum", b.ew("mul", xc, xc), [1])
    n = b.ew("mul", xc, b.broadcast(b.ew("rsqrt", var), (ROWS, COLS), [0]))
    h = b.ew("tanh", b.ew("add", b.dot(n, w), b.dot(n, w)))
    return b.ew("add", x, b.dot(h, w))


Layer = Callable[[GraphBuilder, SSAValue, SSAValue], SSAValue]
LAYERS: dict[str, list[Layer]] = {
    "chain": [_chain_layer],
    "fanout": [_fanout_layer],
    "reduce": [_reduce_layer],
    "branches": [_branches_layer],
    "dense": [_dense_layer],
    "mixed": [_chain_layer, _fanout_layer, _reduce_layer, _branches_layer],
}


def layered(kind: str, n_ops: int) -> ModuleOp:
    """A function of about `n_ops` ops: layers of `kind` until there are that many."""
    b = GraphBuilder("<bench>")
    x = b.add_arg(TensorType(f32, [ROWS, COLS]), "x")
    a = b.add_arg(TensorType(f32, [ROWS, COLS]), "a")
    layers = LAYERS[kind]
    i = ops = 0
    while ops < n_ops:
        last = b.block.last_op
        x = layers[i % len(layers)](b, x, a)
        ops += _ops_after(b.block, last)
        i += 1
    return b.finish(kind, [x])


def _ops_after(block: Block, op: Operation | None) -> int:
    """How many ops follow `op` in `block` (all of them for None): a layer's ops.
    `len(block.ops)` walks the whole block, which would make building quadratic."""
    nxt = block.first_op if op is None else op.next_op
    n = 0
    while nxt is not None:
        n += 1
        nxt = nxt.next_op
    return n


# -- the wide graph -----------------------------------------------------------------


def _chain(b: GraphBuilder, x: SSAValue, n: int) -> SSAValue:
    cur = x
    count = 0
    while count < n:
        step = count % 16
        if step == 15:
            s = b.reduce("sum", cur, [1])
            cur = b.ew("sub", cur, b.broadcast(s, (ROWS, COLS), [0]))
            count += 3
        else:
            op = ("mul", "exp", "add", "neg")[step % 4]
            cur = b.ew(op, cur, x) if op in ("mul", "add") else b.ew(op, cur)
            count += 1
    return cur


def _fanout(b: GraphBuilder, x: SSAValue, n: int, width: int = 100) -> list[SSAValue]:
    outs = []
    count = 0
    while count < n:
        hub = b.ew("exp", x)
        k = max(1, min(width, (n - count) // 3))
        branches = [b.ew("mul", b.ew("neg", hub), x) for _ in range(k)]
        outs.append(_sum_tree(b, branches))
        count += 1 + 3 * k
    return outs


def _embeddings(b: GraphBuilder, table: SSAValue, scale: SSAValue, n: int, group: int = 16) -> list[SSAValue]:
    outs: list[SSAValue] = []
    group_outs: list[SSAValue] = []
    count = 0
    i = 0
    while count < n:
        ids = b.add_arg(TensorType(IntegerType(32), [32]), f"ids{i}")
        s = b.reduce("sum", b.ew("mul", b.gather(table, ids), scale), [0])
        group_outs.append(b.ew("tanh", s))
        count += 5
        i += 1
        if len(group_outs) == group:
            outs.append(_sum_tree(b, group_outs))
            group_outs = []
    if group_outs:
        outs.append(_sum_tree(b, group_outs))
    return outs


def wide(n_ops: int) -> ModuleOp:
    b = GraphBuilder("<bench>")
    x = b.add_arg(TensorType(f32, [ROWS, COLS]), "x")
    table = b.add_arg(TensorType(f32, [1000, 64]), "table")
    scale = b.add_arg(TensorType(f32, [32, 64]), "scale")
    third = n_ops // 3
    outs = [_chain(b, x, third), *_fanout(b, x, third), *_embeddings(b, table, scale, n_ops - 2 * third)]
    return b.finish("wide", outs)


KINDS = [*LAYERS, "wide"]


def build(kind: str, n_ops: int) -> ModuleOp:
    return wide(n_ops) if kind == "wide" else layered(kind, n_ops)


def measure(kind: str, n_ops: int, options: ExplorerOptions, repeat: int) -> tuple[int, float, int, int]:
    """(ops, best CPU seconds, work steps, kernels generated) of exploring one graph."""
    best = None
    for _ in range(repeat):
        f = build(kind, n_ops).ops.first
        assert isinstance(f, func.FuncOp)
        block = f.body.block
        ops = sum(1 for _ in block.ops) - 1
        c0 = time.process_time()
        ex = explore(block, options)
        seconds = time.process_time() - c0
        generated = ex.latency.generated if ex.latency is not None else 0
        if best is None or seconds < best[1]:
            best = (ops, seconds, ex.work.steps, generated)
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS)
    ap.add_argument("--evaluator", default="codegen", choices=["codegen", "simple"],
                    help="which latency-evaluator picks among the plans")
    ap.add_argument("--markdown", action="store_true", help="also write the table into the documents that show it")
    argv = sys.argv[1:] if argv is None else argv
    args = ap.parse_args(argv)
    options = ExplorerOptions(evaluator=args.evaluator)
    sizes = sorted(args.sizes)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'kind':>9} {'ops':>7} {'cpu s':>7} {'ms/op':>6} {'steps':>9} {'steps/op':>8} {'generated':>9}")
    ok = True
    rows: list[list[object]] = []
    for kind in args.kinds:
        per_op: dict[int, float] = {}
        steps_per_op: dict[int, float] = {}
        made: dict[int, int] = {}
        for n in sizes:
            ops, seconds, steps, generated = measure(kind, n, options, 3 if n <= 2000 else 1)
            per_op[n] = 1e3 * seconds / ops
            steps_per_op[n] = steps / ops
            made[n] = generated
            good = per_op[n] <= MS_PER_OP
            ok &= good
            print(f"{kind:>9} {ops:>7} {seconds:>7.2f} {per_op[n]:>6.2f} {steps:>9} {steps / ops:>8.1f} "
                  f"{generated:>9}{'' if good else f'  MISSED (> {MS_PER_OP} ms/op)'}", flush=True)
        ratio = per_op[sizes[-1]] / per_op[sizes[0]]
        if len(per_op) > 1:
            good = per_op[sizes[-1]] <= LINEAR_SLACK * max(per_op[sizes[0]], 0.1)
            ok &= good
            print(f"{kind:>9} ms/op at {sizes[-1]} ops / at {sizes[0]} ops: {ratio:.2f} "
                  f"(target <= {LINEAR_SLACK}) {'ok' if good else 'MISSED'}")
        rows.append([kind, *(f"{per_op[n]:.2f}" for n in sizes), f"{ratio:.2f}",
                     " / ".join(f"{steps_per_op[n]:.1f}" for n in sizes), " / ".join(str(made[n]) for n in sizes)])
    if args.markdown:
        publish(argv, sizes, rows)
    return 0 if ok else 1


def _size(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def publish(argv: list[str], sizes: list[int], rows: list[list[object]]) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # docgen, beside this script
    import docgen

    header = ["graph", *(f"ms/op at {_size(n)}" for n in sizes), f"{_size(sizes[-1])} / {_size(sizes[0])}",
              "steps/op", "kernels generated"]
    caption = (f"CPU ms per op of `explore` (the best of 3 up to 2k ops, else one run), on {os.cpu_count()} cores "
               f"at load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d')}; steps/op and kernels generated by "
               f"the latency-evaluator at each size in turn. Targets: at most {MS_PER_OP} ms per op, and at most "
               f"{LINEAR_SLACK}x the smallest size's per op at the largest.")
    table = docgen.markdown_table(header, rows, [False, *([True] * (len(header) - 1))])
    docgen.publish(__file__, argv, table + "\n\n" + caption)


if __name__ == "__main__":
    sys.exit(main())
