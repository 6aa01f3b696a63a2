"""ONNX control flow whose path is known at compile time.

`If` on a condition fsir can compute while importing (a constant, or one derived from
static shapes) is folded: the taken branch's nodes are imported in the If's place, in
the enclosing scope (ONNX names are unique across a model's subgraphs, and a branch may
read any value of the enclosing graph), and the branch's outputs become the If's. A
condition computed from graph inputs asks for them to be bound (`ConstantInputsNeeded`,
as the backend's shape inputs are); one that depends on run-time data is refused with
the If's location.

    %c = Equal(Shape(x)[0], 2)          (x static: folds to a constant)
    %y = If(%c) then {Relu(x)} else {Neg(x)}      ->      %y = graph.max x, 0

`Loop` whose trip count and condition fsir can compute while importing is unrolled: the
body is imported once per iteration, its inputs bound to the iteration number, the
condition and the loop-carried values of the previous iteration (the body reads the
enclosing scope as a branch does). The carried values after the last iteration are the
Loop's first outputs; each scan output is the iteration's values stacked along a new
axis 0. More than `MAX_UNROLL` iterations is refused at the Loop's location, so a
large loop never silently grows the graph. `Scan` (opset 9 on) is unrolled alike: its
trip count is the static length of its scan inputs along their axes, each iteration
reads one slice of each (in either direction), and each scan output stacks the
iteration's values along its axis (in either direction).

    %v, %s = Loop(3, true, %v0) body(i, c, v) {w = Add(v, 1); -> (c, w, Mul(w, i))}
        ->   w0 = v0 + 1; w1 = w0 + 1; w2 = w1 + 1;  %v = w2, %s = stack(w0 * 0, w1 * 1, w2 * 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue

from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_import import OnnxImporter, converter, elem_type
from fsir.frontend.onnx_sequence import check_outputs

MAX_UNROLL = 1024  # iterations a Loop may unroll to


@converter("If")
def if_(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    cond = im.constant_value(node.input[0], "the condition")
    if cond.size != 1:
        raise im.error(f"the condition of {im.describe()} has {cond.size} elements, not one")
    taken = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
    branch = attrs.get(taken)
    if not isinstance(branch, onnx.GraphProto):
        raise im.error(f"{im.describe()} has no graph attribute '{taken}'")
    return check_outputs(im, node, import_branch(im, node, branch))


def import_branch(im: OnnxImporter, node: onnx.NodeProto, branch: onnx.GraphProto) -> list[SSAValue]:
    """`branch`'s nodes imported in the enclosing scope, at `node`'s location; its outputs."""
    for init in branch.initializer:
        im.inits.setdefault(init.name, init)
    try:
        for inner in branch.node:
            im.node = inner
            im.import_node(inner)
    finally:
        im.node = node
    outputs = [im.value(o.name) for o in branch.output]
    if len(outputs) != len(node.output):
        raise im.error(f"the taken branch of {im.describe()} has {len(outputs)} outputs, the If "
                       f"{len(node.output)}")
    return outputs



@converter("Loop")
def loop(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    body = attrs.get("body")
    if not isinstance(body, onnx.GraphProto):
        raise im.error(f"{im.describe()} has no graph attribute 'body'")
    carried_names = list(node.input[2:])
    if any(not n for n in carried_names):
        raise im.error(f"{im.describe()}: an omitted loop-carried input is not supported")
    n_carried = len(carried_names)
    if len(body.input) != n_carried + 2 or len(body.output) < n_carried + 1:
        raise im.error(f"the body of {im.describe()} has {len(body.input)} inputs and {len(body.output)} "
                       f"outputs for {n_carried} loop-carried values")
    trip = _trip_count(im, node)
    cond = _condition(im, node.input[1] if len(node.input) > 1 else "", "the initial condition")
    if trip is None and cond is None:
        raise im.error(f"{im.describe()} has neither a trip count nor a condition: it never ends")
    if trip is not None and trip > MAX_UNROLL:
        raise im.error(f"{im.describe()} runs {trip} iterations, more than the {MAX_UNROLL} fsir unrolls")
    carried = [im.value(n) for n in carried_names]
    scans: list[list[SSAValue]] = [[] for _ in body.output[n_carried + 1:]]
    iteration = 0
    while (trip is None or iteration < trip) and (cond is None or cond):
        if iteration == MAX_UNROLL:
            raise im.error(f"{im.describe()} runs more than {MAX_UNROLL} iterations, more than fsir unrolls")
        outs = _iterate(im, node, body, iteration, cond, carried)
        if body.output[0].name:
            cond = _condition(im, body.output[0].name, "the condition the body computes")
        carried = outs[:n_carried]
        for scan, v in zip(scans, outs[n_carried:]):
            scan.append(v)
        iteration += 1
    return check_outputs(im, node, carried + [_stack(im, scan) for scan in scans])


def _trip_count(im: OnnxImporter, node: onnx.NodeProto) -> int | None:
    if not node.input or not node.input[0]:
        return None
    m = im.constant_value(node.input[0], "the trip count")
    if m.size != 1:
        raise im.error(f"the trip count of {im.describe()} has {m.size} elements, not one")
    return max(int(m.reshape(-1)[0]), 0)


def _condition(im: OnnxImporter, name: str, what: str) -> bool | None:
    if not name:
        return None
    c = im.constant_value(name, what)
    if c.size != 1:
        raise im.error(f"{what} of {im.describe()} has {c.size} elements, not one")
    return bool(c.reshape(-1)[0])


def _iterate(im: OnnxImporter, node: onnx.NodeProto, body: onnx.GraphProto, iteration: int,
             cond: bool | None, carried: list[SSAValue]) -> list[SSAValue]:
    """One iteration of the body: its outputs after the condition."""
    iter_name, cond_name = body.input[0].name, body.input[1].name
    if iter_name:
        i64 = elem_type(onnx.TensorProto.INT64, "the iteration number")
        im.env[iter_name] = im.b.constant(np.asarray(iteration, np.int64), i64)
    if cond_name:
        i1 = elem_type(onnx.TensorProto.BOOL, "the condition")
        im.env[cond_name] = im.b.constant(np.asarray(True if cond is None else cond), i1)
    for inp, v in zip(body.input[2:], carried):
        im.env[inp.name] = v
    return _import_body(im, node, body)[1:]


def _import_body(im: OnnxImporter, node: onnx.NodeProto, body: onnx.GraphProto) -> list[SSAValue]:
    """`body`'s nodes imported in the enclosing scope (its inputs bound); all its outputs."""
    for init in body.initializer:
        im.inits.setdefault(init.name, init)
    try:
        for inner in body.node:
            im.node = inner
            im.import_node(inner)
    finally:
        im.node = node
    return [im.value(o.name) for o in body.output]


def _stack(im: OnnxImporter, values: list[SSAValue], axis: int = 0) -> SSAValue:
    if not values:
        raise im.error(f"{im.describe()} runs no iteration, so its scan outputs have no known shape")
    shapes = {shape_of(v.type) for v in values}
    if len(shapes) != 1:
        raise im.error(f"the scan outputs of {im.describe()} change shape between iterations "
                       f"({', '.join(str(list(s)) for s in sorted(shapes))})")
    rows = [im.b.reshape(v, [*shape_of(v.type)[:axis], 1, *shape_of(v.type)[axis:]]) for v in values]
    return rows[0] if len(rows) == 1 else im.b.concat(rows, axis)


@converter("Scan")
def scan(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    body = attrs.get("body")
    if not isinstance(body, onnx.GraphProto):
        raise im.error(f"{im.describe()} has no graph attribute 'body'")
    if im.opset < 9:
        raise im.error(f"{im.describe()}: Scan before opset 9 (with a sequence_lens input) is not supported")
    m = int(attrs["num_scan_inputs"])
    n_state = len(node.input) - m
    k = len(body.output) - n_state
    if n_state < 0 or k < 0 or len(body.input) != len(node.input):
        raise im.error(f"the body of {im.describe()} does not match its {n_state} states and {m} scan inputs")
    xs = [im.value(n) for n in node.input[n_state:]]
    in_axes = [im.axis(a, im.rank(x)) for a, x in zip(attrs.get("scan_input_axes", [0] * m), xs)]
    in_rev = list(attrs.get("scan_input_directions", [0] * m))
    lengths = {shape_of(x.type)[a] for x, a in zip(xs, in_axes)}
    if len(lengths) != 1:
        raise im.error(f"the scan inputs of {im.describe()} have different lengths {sorted(lengths)}")
    trip = lengths.pop() if xs else 0
    if trip < 0:
        raise im.error(f"the scan inputs of {im.describe()} have a run-time length")
    if trip > MAX_UNROLL:
        raise im.error(f"{im.describe()} runs {trip} iterations, more than the {MAX_UNROLL} fsir unrolls")
    state = [im.value(n) for n in node.input[:n_state]]
    outs: list[list[SSAValue]] = [[] for _ in range(k)]
    for t in range(trip):
        slices = [_take_slice(im, x, a, trip - 1 - t if rev else t) for x, a, rev in zip(xs, in_axes, in_rev)]
        for inp, v in zip(body.input, [*state, *slices]):
            im.env[inp.name] = v
        results = _import_body(im, node, body)
        state = results[:n_state]
        for out, v in zip(outs, results[n_state:]):
            out.append(v)
    out_axes = list(attrs.get("scan_output_axes", [0] * k))
    out_rev = list(attrs.get("scan_output_directions", [0] * k))
    stacked = []
    for values, axis, rev in zip(outs, out_axes, out_rev):
        values = values[::-1] if rev else values
        stacked.append(_stack(im, values, im.axis(axis, im.rank(values[0]) + 1) if values else 0))
    return state + stacked


def _take_slice(im: OnnxImporter, x: SSAValue, axis: int, index: int) -> SSAValue:
    shape = shape_of(x.type)
    part = im.b.slice(x, [index if d == axis else 0 for d in range(len(shape))],
                      [index + 1 if d == axis else s for d, s in enumerate(shape)])
    return im.b.reshape(part, [s for d, s in enumerate(shape) if d != axis])
