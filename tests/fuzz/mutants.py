"""Seeded mutants of the examples in examples/ (the inputs of tests/fuzz/test_mutation_fuzz.py).

A mutant is fully determined by its seed: the seed picks the example, the mutator and
every choice the mutator makes, so a failing mutant is reproduced by

    .venv/bin/python tests/fuzz/mutants.py --seed N      # writes the mutant, prints the fs-run command

Text examples (.mlir, .hlo) get line deletions and duplications, token swaps, changed
numbers and element types, byte flips and truncation; ONNX models get byte flips and
truncation of the serialized protobuf and structural mutations of the decoded model:
dropped or duplicated nodes and initializers, wrong element types and shapes in graph
inputs, outputs and initializers, dangling node inputs, changed attributes.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class Example:
    path: Path
    weight: float  # how often it is picked: cheap examples more often
    device: str  # "sim" (run with --check) or "reference" (too big for the simulator per mutant)

    @property
    def kind(self) -> str:
        return self.path.suffix.lstrip(".")


# Weights and devices keep a mutant at ~50 ms on average on one core: the small HLO models run
# on the simulator with --check, the others on the reference interpreter; the .mlir examples
# (4096x1024 tensors) and the BERT models cost most per mutant that runs, so they are picked
# less often.
EXAMPLE_TABLE = (
    Example(EXAMPLES / "softmax.mlir", 0.4, "reference"),
    Example(EXAMPLES / "layernorm.mlir", 0.4, "reference"),
    Example(EXAMPLES / "rmsnorm.mlir", 0.4, "reference"),
    Example(EXAMPLES / "gelu.mlir", 0.4, "reference"),
    Example(EXAMPLES / "bert_layer.mlir", 0.05, "reference"),
    Example(EXAMPLES / "hlo" / "softmax.hlo", 1.0, "sim"),
    Example(EXAMPLES / "hlo" / "layernorm.hlo", 1.0, "sim"),
    Example(EXAMPLES / "hlo" / "gelu_mlp.hlo", 0.7, "reference"),
    Example(EXAMPLES / "hlo" / "causal_attention.hlo", 0.7, "reference"),
    Example(EXAMPLES / "hlo" / "embedding_bag.hlo", 1.0, "reference"),
    Example(EXAMPLES / "hlo" / "layernorm.opt.hlo", 0.7, "reference"),
    Example(EXAMPLES / "hlo" / "bert_layer.hlo", 0.15, "reference"),
    Example(EXAMPLES / "onnx" / "bert_layer.onnx", 1.0, "reference"),
    Example(EXAMPLES / "onnx" / "bert_layer_legacy.onnx", 0.5, "reference"),
    Example(EXAMPLES / "onnx" / "bert_tiny.onnx", 0.15, "reference"),
)


@dataclass(frozen=True)
class Mutant:
    seed: int
    example: Example
    mutator: str
    data: bytes

    @property
    def filename(self) -> str:
        return f"mutant{self.seed}.{self.example.kind}"


# ---------------------------------------------------------------------------------------------
# byte-level mutators (every kind)
# ---------------------------------------------------------------------------------------------


def byte_flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4))):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data))]


# ---------------------------------------------------------------------------------------------
# text mutators (.mlir, .hlo)
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"%?[\w.]+|[^\s\w]")
_NUMBER = re.compile(r"(?<![\w%.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_TYPES = ("f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "s32", "s64", "u8", "pred", "f8E4M3FN",
          "index", "c64", "tuple")
_TYPE = re.compile(r"\b(?:f32|f16|bf16|f64|i1|i8|i32|i64|s32|s64|pred)\b")
_NUMBERS = ("0", "1", "-1", "2", "3", "7", "64", "1024", "4097", "-0.0", "1e39", "nan", "inf", "2147483648",
            "9223372036854775808", "99999999999999999999")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def delete_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def duplicate_line(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return "".join(lines)


def swap_tokens(text: str, rng: random.Random) -> str:
    """Two tokens exchanged, on one line (an operand order, a type and a name) or anywhere."""
    lines = _lines(text)
    i = rng.randrange(len(lines))
    tokens = list(_TOKEN.finditer(lines[i]))
    if len(tokens) < 2:
        return delete_line(text, rng)
    a, b = sorted(rng.sample(tokens, 2), key=lambda m: m.start())
    s = lines[i]
    lines[i] = s[: a.start()] + b.group() + s[a.end(): b.start()] + a.group() + s[b.end():]
    return "".join(lines)


def replace_token(text: str, rng: random.Random) -> str:
    """A token replaced by another token of the file (a value name, an op name, a keyword)."""
    tokens = list(_TOKEN.finditer(text))
    a = rng.choice(tokens)
    b = rng.choice(tokens)
    return text[: a.start()] + b.group() + text[a.end():]


def change_number(text: str, rng: random.Random) -> str:
    numbers = list(_NUMBER.finditer(text))
    if not numbers:
        return byte_flip(text.encode(), rng).decode("utf-8", "replace")
    m = rng.choice(numbers)
    value = m.group()
    if rng.random() < 0.5 and re.fullmatch(r"-?\d+", value):
        new = str(int(value) + rng.choice((-2, -1, 1, 2, int(value))))
    else:
        new = rng.choice(_NUMBERS)
    return text[: m.start()] + new + text[m.end():]


def change_type(text: str, rng: random.Random) -> str:
    types = list(_TYPE.finditer(text))
    if not types:
        return change_number(text, rng)
    m = rng.choice(types)
    return text[: m.start()] + rng.choice(_TYPES) + text[m.end():]


def _text(fn: Callable[[str, random.Random], str]) -> Callable[[bytes, random.Random], bytes]:
    def mutate(data: bytes, rng: random.Random) -> bytes:
        return fn(data.decode(), rng).encode()

    mutate.__name__ = fn.__name__
    return mutate


TEXT_MUTATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "byte_flip": byte_flip,
    "truncate": truncate,
    "delete_line": _text(delete_line),
    "duplicate_line": _text(duplicate_line),
    "swap_tokens": _text(swap_tokens),
    "replace_token": _text(replace_token),
    "change_number": _text(change_number),
    "change_type": _text(change_type),
}


# ---------------------------------------------------------------------------------------------
# ONNX mutators: on the decoded ModelProto
# ---------------------------------------------------------------------------------------------


def _onnx(fn):
    def mutate(data: bytes, rng: random.Random) -> bytes:
        import onnx

        model = onnx.ModelProto()
        model.ParseFromString(data)
        fn(model, rng)
        return model.SerializeToString()

    mutate.__name__ = fn.__name__
    return mutate


def _elem_types() -> list[int]:
    import onnx

    return [v for v in onnx.TensorProto.DataType.values() if v != onnx.TensorProto.UNDEFINED] + [0, 99]


def drop_node(model, rng: random.Random) -> None:
    del model.graph.node[rng.randrange(len(model.graph.node))]


def duplicate_node(model, rng: random.Random) -> None:
    nodes = model.graph.node
    i = rng.randrange(len(nodes))
    copy = type(nodes[i])()
    copy.CopyFrom(nodes[i])
    nodes.insert(rng.randrange(len(nodes) + 1), copy)


def swap_nodes(model, rng: random.Random) -> None:
    nodes = model.graph.node
    i, j = rng.sample(range(len(nodes)), 2)
    a, b = type(nodes[i])(), type(nodes[j])()
    a.CopyFrom(nodes[i])
    b.CopyFrom(nodes[j])
    nodes[i].CopyFrom(b)
    nodes[j].CopyFrom(a)


def drop_initializer(model, rng: random.Random) -> None:
    del model.graph.initializer[rng.randrange(len(model.graph.initializer))]


def duplicate_initializer(model, rng: random.Random) -> None:
    inits = model.graph.initializer
    i = rng.randrange(len(inits))
    copy = inits.add()
    copy.CopyFrom(inits[i])
    if rng.random() < 0.5:  # the same name with other contents
        copy.dims.append(2)


def initializer_dtype(model, rng: random.Random) -> None:
    t = rng.choice(model.graph.initializer)
    t.data_type = rng.choice(_elem_types())


def initializer_shape(model, rng: random.Random) -> None:
    t = rng.choice(model.graph.initializer)
    _mutate_dims(t.dims, rng)


def _mutate_dims(dims, rng: random.Random) -> None:
    choice = rng.randrange(4)
    if choice == 0 and len(dims):
        dims[rng.randrange(len(dims))] = rng.choice((0, 1, 3, 7, -1, 2**31, 2**40))
    elif choice == 1 and len(dims):
        del dims[rng.randrange(len(dims))]
    elif choice == 2:
        dims.append(rng.choice((1, 2)))
    else:
        del dims[:]


def value_info_dtype(model, rng: random.Random) -> None:
    v = rng.choice([*model.graph.input, *model.graph.output])
    v.type.tensor_type.elem_type = rng.choice(_elem_types())


def value_info_shape(model, rng: random.Random) -> None:
    v = rng.choice([*model.graph.input, *model.graph.output])
    dims = v.type.tensor_type.shape.dim
    choice = rng.randrange(5)
    if choice == 0 and len(dims):
        dims[rng.randrange(len(dims))].dim_value = rng.choice((0, 1, 3, 7, 2**31))
    elif choice == 1 and len(dims):
        dims[rng.randrange(len(dims))].dim_param = rng.choice(("batch", "n", ""))
    elif choice == 2 and len(dims):
        del dims[rng.randrange(len(dims))]
    elif choice == 3:
        dims.add().dim_value = rng.choice((1, 2))
    else:
        v.type.tensor_type.ClearField("shape")


def dangling_input(model, rng: random.Random) -> None:
    node = rng.choice(model.graph.node)
    if not len(node.input):
        node.input.append("dangling")
    else:
        node.input[rng.randrange(len(node.input))] = rng.choice(("dangling", "", node.output[0]))


def drop_graph_io(model, rng: random.Random) -> None:
    fields = [f for f in (model.graph.input, model.graph.output) if len(f)]
    f = rng.choice(fields)
    del f[rng.randrange(len(f))]


def change_attribute(model, rng: random.Random) -> None:
    import onnx

    nodes = [n for n in model.graph.node if len(n.attribute)]
    if not nodes:
        return dangling_input(model, rng)
    a = rng.choice(rng.choice(nodes).attribute)
    choice = rng.randrange(4)
    if a.type == onnx.AttributeProto.INT and choice < 3:
        a.i = rng.choice((-3, -1, 0, 1, 2, 5, 2**40))
    elif a.type == onnx.AttributeProto.INTS and choice < 3 and len(a.ints):
        a.ints[rng.randrange(len(a.ints))] = rng.choice((-3, -1, 0, 1, 2, 5))
    elif a.type == onnx.AttributeProto.FLOAT and choice < 3:
        a.f = rng.choice((0.0, -1.0, float("nan"), float("inf"), 1e30))
    elif a.type == onnx.AttributeProto.TENSOR and choice < 3:
        a.t.data_type = rng.choice(_elem_types())
    elif choice == 3:
        a.type = rng.choice(list(onnx.AttributeProto.AttributeType.values()))
    else:
        a.name = rng.choice(("axis", "perm", "to", "value", "bogus"))


def change_op_type(model, rng: random.Random) -> None:
    nodes = model.graph.node
    node = rng.choice(nodes)
    node.op_type = rng.choice([n.op_type for n in nodes] + ["NoSuchOp"])


def change_opset(model, rng: random.Random) -> None:
    for o in model.opset_import:
        o.version = rng.choice((1, 6, 11, 13, 17, 18, 21, 99))


ONNX_MUTATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "byte_flip": byte_flip,
    "truncate": truncate,
    **{fn.__name__: _onnx(fn) for fn in (
        drop_node, duplicate_node, swap_nodes, drop_initializer, duplicate_initializer, initializer_dtype,
        initializer_shape, value_info_dtype, value_info_shape, dangling_input, drop_graph_io, change_attribute,
        change_op_type, change_opset)},
}


# ---------------------------------------------------------------------------------------------


@cache
def _source(path: Path) -> bytes:
    return path.read_bytes()


def mutant(seed: int) -> Mutant:
    """The mutant of `seed`: the example, the mutator and its choices all come from the seed."""
    rng = random.Random(seed)
    example = rng.choices(EXAMPLE_TABLE, weights=[e.weight for e in EXAMPLE_TABLE])[0]
    mutators = ONNX_MUTATORS if example.kind == "onnx" else TEXT_MUTATORS
    name = rng.choice(sorted(mutators))
    return Mutant(seed, example, name, mutators[name](_source(example.path), rng))


def fs_run_argv(m: Mutant, path: str | Path) -> list[str]:
    """How the fuzzer runs a mutant: as a user would, with fs-run."""
    argv = [str(path), "--device", m.example.device]
    if m.example.device == "sim":
        argv.append("--check")
    return argv


def main() -> None:
    p = argparse.ArgumentParser(description="write the mutant of a seed and print how to run it")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", default=".", help="directory to write the mutant to (default .)")
    args = p.parse_args()
    m = mutant(args.seed)
    path = Path(args.out) / m.filename
    path.write_bytes(m.data)
    print(f"seed {m.seed}: {m.mutator} of {m.example.path.relative_to(ROOT)} -> {path}")
    print("FSIR_DEBUG=1 .venv/bin/fs-run " + " ".join(fs_run_argv(m, path)))


if __name__ == "__main__":
    sys.exit(main())
