"""ONNX sequence ops whose length is known at compile time.

A sequence is a Python tuple of tensor values while importing: SequenceEmpty,
SequenceConstruct, SequenceInsert and SplitToSequence build one, SequenceAt,
SequenceLength and ConcatFromSequence read it. Exporters emit these inside loops
(PyTorch's dynamo exporter writes `nn.EmbeddingBag` as a Loop appending each bag's
sum to a sequence, then ConcatFromSequence); unrolled (`onnx_control`), every position
is a compile-time constant and the sequence disappears. In the importer's scope a
sequence is held by a token, a fresh empty constant that no tensor op reads (it is
dead at the end), mapped to its elements here; the token travels through Loop-carried
values and If branches as any value does.

    s0 = SequenceEmpty(); s1 = SequenceInsert(s0, a); s2 = SequenceInsert(s1, b)
    y = ConcatFromSequence(s2, axis=0)                 ->      y = graph.concat a, b
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue

from fsir.dialects.graph import shape_of
from fsir.frontend.onnx_import import OnnxImporter, converter, elem_type


def make_sequence(im: OnnxImporter, node: onnx.NodeProto, elements: tuple[SSAValue, ...]) -> SSAValue:
    """A token for `elements`; a graph output may not be a sequence (fsir's results are tensors)."""
    _check_output(im, node.output[0])
    token = im.b.constant(np.zeros((0,), np.float32), elem_type(onnx.TensorProto.FLOAT, "a sequence"))
    im.sequences[token] = elements
    return token


def check_outputs(im: OnnxImporter, node: onnx.NodeProto, outs: list[SSAValue]) -> list[SSAValue]:
    """`outs` of a node that passes values through (If, Loop), none a sequence that is a graph output."""
    tokens = im.sequences
    for name, v in zip(node.output, outs):
        if v in tokens:
            _check_output(im, name)
    return outs


def _check_output(im: OnnxImporter, name: str) -> None:
    if any(o.name == name for o in im.model.graph.output):
        raise im.error(f"{im.describe()}: its output '{name}' is a sequence and a graph output; fsir's results "
                       "are tensors")


def sequence(im: OnnxImporter, name: str) -> tuple[SSAValue, ...]:
    v = im.value(name)
    elements = im.sequences.get(v)
    if elements is None:
        raise im.error(f"input '{name}' of {im.describe()} is not a sequence fsir knows the elements of")
    return elements


def _position(im: OnnxImporter, node: onnx.NodeProto, index: int, length: int, insert: bool) -> int:
    """The node's position input `index` as an index into a sequence of `length`
    (negative counts from the end); absent, the end (insert) or an error."""
    if len(node.input) <= index or not node.input[index]:
        return length
    p = im.constant_value(node.input[index], "the position")
    if p.size != 1:
        raise im.error(f"the position of {im.describe()} has {p.size} elements, not one")
    pos = int(p.reshape(-1)[0])
    pos = pos + length if pos < 0 else pos
    if not 0 <= pos <= length - (0 if insert else 1):
        raise im.error(f"the position {int(p.reshape(-1)[0])} of {im.describe()} is out of range for a sequence "
                       f"of {length}")
    return pos


@converter("SequenceEmpty")
def sequence_empty(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    return [make_sequence(im, node, ())]


@converter("SequenceConstruct")
def sequence_construct(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    return [make_sequence(im, node, tuple(im.inputs(node)))]


@converter("SequenceInsert")
def sequence_insert(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    seq = sequence(im, node.input[0])
    pos = _position(im, node, 2, len(seq), insert=True)
    return [make_sequence(im, node, (*seq[:pos], im.value(node.input[1]), *seq[pos:]))]


@converter("SequenceErase")
def sequence_erase(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    seq = sequence(im, node.input[0])
    pos = _position(im, node, 1, len(seq), insert=False) if len(node.input) > 1 and node.input[1] \
        else len(seq) - 1
    if pos < 0:
        raise im.error(f"{im.describe()} erases from an empty sequence")
    return [make_sequence(im, node, seq[:pos] + seq[pos + 1:])]


@converter("SequenceAt")
def sequence_at(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    seq = sequence(im, node.input[0])
    return [seq[_position(im, node, 1, len(seq), insert=False)]]


@converter("SequenceLength")
def sequence_length(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    seq = sequence(im, node.input[0])
    return [im.b.constant(np.asarray(len(seq), np.int64), elem_type(onnx.TensorProto.INT64, "a length"))]


@converter("ConcatFromSequence")
def concat_from_sequence(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    seq = sequence(im, node.input[0])
    if not seq:
        raise im.error(f"{im.describe()} concatenates an empty sequence, whose result has no known type")
    new_axis = bool(attrs.get("new_axis", 0))
    rank = len(shape_of(seq[0].type)) + (1 if new_axis else 0)
    axis = im.axis(attrs["axis"], rank)
    if new_axis:
        seq = tuple(im.b.reshape(v, [*shape_of(v.type)[:axis], 1, *shape_of(v.type)[axis:]]) for v in seq)
    return [seq[0] if len(seq) == 1 else im.b.concat(list(seq), axis)]


@converter("SplitToSequence")
def split_to_sequence(im: OnnxImporter, node: onnx.NodeProto, attrs: dict[str, Any]) -> list[SSAValue]:
    x = im.value(node.input[0])
    shape = shape_of(x.type)
    axis = im.axis(attrs.get("axis", 0), len(shape))
    size = shape[axis]
    if len(node.input) > 1 and node.input[1]:
        split = im.constant_value(node.input[1], "the split")
        if split.ndim == 0:
            chunk = int(split)
            lengths = [min(chunk, size - s) for s in range(0, size, chunk)] if chunk > 0 else []
        else:
            lengths = [int(s) for s in split.reshape(-1)]
        keep = True
    else:
        lengths, keep = [1] * size, bool(attrs.get("keepdims", 1))
    if sum(lengths) != size or any(n <= 0 for n in lengths):
        raise im.error(f"the split {lengths} of {im.describe()} does not divide the axis of size {size}")
    parts, start = [], 0
    for n in lengths:
        part = im.b.slice(x, [start if d == axis else 0 for d in range(len(shape))],
                          [start + n if d == axis else s for d, s in enumerate(shape)])
        parts.append(part if keep else im.b.reshape(part, [s for d, s in enumerate(shape) if d != axis]))
        start += n
    return [make_sequence(im, node, tuple(parts))]
