"""Seeded mutants of the examples in examples/ (the inputs of tests/fuzz/test_mutation_fuzz.py).

A mutant is fully determined by its seed: the seed picks the example, the mutator and
every choice the mutator makes, so a failing mutant is reproduced by

    .venv/bin/python tests/fuzz/mutants.py --seed N      # writes the mutant, prints the fs-run command

Text examples (.mlir, .hlo) get line deletions and duplications, token swaps, changed
numbers and element types, byte flips and truncation; ONNX models get byte flips and
truncation of the serialized protobuf and structural mutations of the decoded model:
dropped or duplicated nodes and initializers, wrong element types and shapes in graph
inputs, outputs and initializers, dangling node inputs, changed attributes.

Graph-dialect examples (.mlir) also get the patterns exporters write around attention and
normalisation inserted (`PATTERN_MUTATORS`): a dot's operands scaled by a value computed from
a shape (constant shape, gather, convert, sqrt, div, broadcast), a `Cast` chain after a value,
a per-row guard (reduce max, compare, select) or a mul on a dot's operand. These mutants are
valid graphs, so they must run and, on the simulator, match the reference; the small graphs of
tests/fuzz/corpus/ (an attention and a LayerNorm feeding a projection, rows not a multiple of
a tile) run on the simulator with --check, so the stitch-fused kernels are checked.
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
CORPUS = Path(__file__).resolve().parent / "corpus"  # small graphs for the pattern mutators


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
    # ~0.3 s per mutant (compiled with stitch, run on the simulator): picked in ~1 of 40
    Example(CORPUS / "attention.mlir", 0.12, "sim"),
    Example(CORPUS / "layernorm_dot.mlir", 0.08, "sim"),
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
# pattern mutators (.mlir): exporter-style ops inserted into a valid graph, which stays valid
# ---------------------------------------------------------------------------------------------

_DEF = re.compile(r"^(\s*)(%[\w.]+) = graph\.(\w+)\b.*? : (?:\(.*\) -> )?(tensor<[^>]*>)\s*$")
_DOT = re.compile(r"^\s*%[\w.]+ = graph\.dot (%[\w.]+), (%[\w.]+) : \((tensor<[^>]*>), (tensor<[^>]*>)\)")
_FLOAT = ("f32", "f16", "bf16")


@dataclass
class _Graph:
    """A graph-dialect function as lines, with fresh names for inserted values."""

    lines: list[str]
    made: int = 0

    def fresh(self) -> str:
        self.made += 1
        return f"%mut{self.made}"

    def insert(self, at: int, ops: list[str]) -> None:
        self.lines[at:at] = ["  " + op + "\n" for op in ops]

    def rename_uses(self, old: str, new: str, after: int) -> None:
        """Uses of `old` on lines from `after` on read `new` (its definition stays)."""
        use = re.compile(re.escape(old) + r"(?![\w.])")
        for i in range(after, len(self.lines)):
            self.lines[i] = use.sub(new, self.lines[i])


def _dims(t: str) -> tuple[list[int], str]:
    *dims, elem = t[len("tensor<"):-1].split("x")
    return [int(d) for d in dims], elem


def _tensor(dims: list[int], elem: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in dims) + elem + ">"


def _float_dots(g: _Graph) -> list[tuple[int, re.Match]]:
    found = [(i, _DOT.match(line)) for i, line in enumerate(g.lines)]
    return [(i, m) for i, m in found if m and _dims(m.group(3))[1] in _FLOAT and "?" not in m.group(0)]


def _shape_scale(g: _Graph, dims: list[int], elem: str, root: bool) -> tuple[list[str], str]:
    """Ops computing 1/sqrt(dims[-1]) (its square root if `root`) from a constant shape,
    as the expanded ONNX functions do; the scalar's name."""
    shape, at, size, f, one, sq, inv = (g.fresh() for _ in range(7))
    ops = [f"{shape} = graph.constant dense<[{', '.join(map(str, dims))}]> : tensor<{len(dims)}xi64>",
           f"{at} = graph.constant dense<{len(dims) - 1}> : tensor<i64>",
           f"{size} = graph.gather {shape}, {at} : (tensor<{len(dims)}xi64>, tensor<i64>) -> tensor<i64>",
           f"{f} = graph.convert {size} : (tensor<i64>) -> tensor<f32>",
           f"{one} = graph.constant dense<1.0> : tensor<f32>",
           f"{sq} = graph.sqrt {f} : tensor<f32>",
           f"{inv} = graph.div {one}, {sq} : tensor<f32>"]
    if root:
        r = g.fresh()
        ops.append(f"{r} = graph.sqrt {inv} : tensor<f32>")
        inv = r
    if elem != "f32":
        c = g.fresh()
        ops.append(f"{c} = graph.convert {inv} : (tensor<f32>) -> tensor<{elem}>")
        inv = c
    return ops, inv


def _scaled(g: _Graph, x: str, t: str, s: str, op: str = "mul") -> tuple[list[str], str]:
    """x (of type t) times the scalar s broadcast to t."""
    b, y = g.fresh(), g.fresh()
    elem = _dims(t)[1]
    return [f"{b} = graph.broadcast {s} dims [] : (tensor<{elem}>) -> {t}",
            f"{y} = graph.{op} {x}, {b} : {t}"], y


def scale_dot_operands(g: _Graph, rng: random.Random) -> bool:
    """A dot's operands multiplied by one scale computed from A's shape: both (each by
    the square root, as ONNX's Attention with a `scale`), A only, or B only."""
    dots = _float_dots(g)
    if not dots:
        return False
    i, m = rng.choice(dots)
    a, b, ta, tb = m.groups()
    which = rng.choice(("both", "both", "a", "b"))
    ops, s = _shape_scale(g, *_dims(ta), root=which == "both")
    line = g.lines[i]
    if which in ("both", "a"):
        more, a2 = _scaled(g, a, ta, s)
        ops += more
        line = line.replace(f"graph.dot {a}, ", f"graph.dot {a2}, ", 1)
    if which in ("both", "b"):
        more, b2 = _scaled(g, b, tb, s, rng.choice(("mul", "div")) if which == "b" else "mul")
        ops += more
        line = line.replace(f", {b} :", f", {b2} :", 1)
    g.lines[i] = line
    g.insert(i, ops)
    return True


def convert_chain(g: _Graph, rng: random.Random) -> bool:
    """A float value cast to another float type and back (or to f32 twice), read by
    every later use: the `Cast` chains exporters leave around mixed precision."""
    defs = [(i, d) for i, line in enumerate(g.lines) if (d := _DEF.match(line)) and _dims(d.group(4))[1] in _FLOAT
            and "?" not in d.group(4)]
    if not defs:
        return False
    i, d = rng.choice(defs)
    x, t = d.group(2), d.group(4)
    dims, elem = _dims(t)
    via = rng.choice([e for e in _FLOAT if e != elem] + ["f32"])
    c1, c2 = g.fresh(), g.fresh()
    g.insert(i + 1, [f"{c1} = graph.convert {x} : ({t}) -> {_tensor(dims, via)}",
                     f"{c2} = graph.convert {c1} : ({_tensor(dims, via)}) -> {t}"])
    g.rename_uses(x, c2, i + 3)
    return True


def guard_dot_operand(g: _Graph, rng: random.Random) -> bool:
    """A dot's A operand selected by a per-row guard (rows whose max passes a bound
    read 0, as ONNX's Attention zeroes fully masked rows) or multiplied by a constant
    (a dropout scale, a probability modifier): between a reduction and the dot."""
    dots = [(i, m) for i, m in _float_dots(g) if len(_dims(m.group(3))[0]) >= 2]
    if not dots:
        return False
    i, m = rng.choice(dots)
    a, ta = m.group(1), m.group(3)
    dims, elem = _dims(ta)
    if rng.random() < 0.3:
        c, y = g.fresh(), g.fresh()
        ops = [f"{c} = graph.constant dense<{rng.choice(('1.25', '0.5', '2.0'))}> : {ta}",
               f"{y} = graph.mul {a}, {c} : {ta}"]
    else:
        rows = _tensor(dims[:-1], elem)
        cond = _tensor(dims[:-1], "i1")
        mx, bound, bad, badb, zero, y = (g.fresh() for _ in range(6))
        ops = [f"{mx} = graph.reduce max {a} dims [{len(dims) - 1}] : ({ta}) -> {rows}",
               f"{bound} = graph.constant dense<{rng.choice(('0.5', '1.0', '2.0'))}> : {rows}",
               f"{bad} = graph.compare {rng.choice(('gt', 'lt'))} {mx}, {bound} : ({rows}, {rows}) -> {cond}",
               f"{badb} = graph.broadcast {bad} dims [{', '.join(map(str, range(len(dims) - 1)))}] : "
               f"({cond}) -> {_tensor(dims, 'i1')}",
               f"{zero} = graph.constant dense<0.0> : {ta}",
               f"{y} = graph.select {badb}, {zero}, {a} : ({_tensor(dims, 'i1')}, {ta}, {ta}) -> {ta}"]
    g.lines[i] = g.lines[i].replace(f"graph.dot {a}, ", f"graph.dot {y}, ", 1)
    g.insert(i, ops)
    return True


def _patterns(fn: Callable[[_Graph, random.Random], bool]) -> Callable[[bytes, random.Random], bytes]:
    """One to three insertions of pattern `fn` or the others (falling back to a text
    mutation where no pattern fits)."""
    def mutate(data: bytes, rng: random.Random) -> bytes:
        g = _Graph(_lines(data.decode()))
        applied = fn(g, rng)
        for _ in range(rng.choice((0, 0, 1, 2))):
            applied = rng.choice(_PATTERNS)(g, rng) or applied
        if not applied:
            return _text(swap_tokens)(data, rng)
        return "".join(g.lines).encode()

    mutate.__name__ = fn.__name__
    return mutate


_PATTERNS = (scale_dot_operands, convert_chain, guard_dot_operand)
PATTERN_MUTATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {fn.__name__: _patterns(fn) for fn in _PATTERNS}


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


def mutators_of(example: Example) -> dict[str, Callable[[bytes, random.Random], bytes]]:
    """ONNX models get structural mutations; the corpus graphs (made for them) pattern
    insertions only; the other graph-dialect examples both kinds; HLO text mutations."""
    if example.kind == "onnx":
        return ONNX_MUTATORS
    if example.path.parent == CORPUS:
        return PATTERN_MUTATORS
    if example.kind == "mlir":
        return {**TEXT_MUTATORS, **PATTERN_MUTATORS}
    return TEXT_MUTATORS


def mutant(seed: int) -> Mutant:
    """The mutant of `seed`: the example, the mutator and its choices all come from the seed."""
    rng = random.Random(seed)
    example = rng.choices(EXAMPLE_TABLE, weights=[e.weight for e in EXAMPLE_TABLE])[0]
    mutators = mutators_of(example)
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
