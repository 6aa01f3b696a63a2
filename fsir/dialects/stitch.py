"""The stitch dialect: which graph ops share one kernel.

A `stitch.fusion` holds the graph ops of one fusion pattern in a region whose entry
block arguments mirror the fusion's operands; `stitch.yield` returns the fusion's
results (several for multi-output fusions). The region may contain independent
subgraphs (kernel packing). Ops left outside every fusion become kernels of their own
(free reshapes excepted: they cost no kernel).

```mlir
%y = stitch.fusion (%x, %n) {pattern = 0 : i64, score = 3.1e-05 : f64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4xf32> {
^bb0(%x0: tensor<4x8xf32>, %n0: tensor<4xf32>):
  %s = graph.reduce sum %x0 dims [1] : (tensor<4x8xf32>) -> tensor<4xf32>
  %m = graph.div %s, %n0 : tensor<4xf32>
  stitch.yield %m : tensor<4xf32>
}
```
"""  # noqa: E501 (an IR example)

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from fsir.dialects import graph
from fsir.dialects.common import TensorYieldOp, print_result_types


def _type_list(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


def check_region_signature(op: Operation, region: Region, yield_name: str) -> None:
    """Shared by stitch.fusion and schedule.kernel: one block whose arguments mirror the
    operands, ending in a yield whose types are the results'."""
    if len(region.blocks) != 1:
        raise VerifyException(f"the region of {op.name} must have exactly one block")
    block = region.blocks[0]
    arg_types = [a.type for a in block.args]
    operand_types = [o.type for o in op.operands]
    if arg_types != operand_types:
        raise VerifyException(
            f"block arguments ({_type_list(arg_types)}) must mirror the operands ({_type_list(operand_types)})"
        )
    last = block.last_op
    if last is None or last.name != yield_name:
        raise VerifyException(f"the region of {op.name} must end with {yield_name}")
    yield_types = [o.type for o in last.operands]
    result_types = [r.type for r in op.results]
    if yield_types != result_types:
        raise VerifyException(
            f"{yield_name} types ({_type_list(yield_types)}) must be the result types ({_type_list(result_types)})"
        )


_RegionOp = TypeVar("_RegionOp", bound=IRDLOperation)


def parse_region_op(parser: Parser, cls: type[_RegionOp], properties: dict[str, Attribute]) -> _RegionOp:
    """`(operands) attr-dict : (types) -> types region`, the syntax shared by region ops."""
    operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    if len(types) != len(operands):
        parser.raise_error(f"expected {len(operands)} operand types, got {len(types)}", pos, parser.pos)
    parser.parse_punctuation("->")
    if parser.parse_optional_punctuation("(") is not None:
        results = [] if parser.parse_optional_punctuation(")") else None
        if results is None:
            results = [parser.parse_type()]
            while parser.parse_optional_punctuation(","):
                results.append(parser.parse_type())
            parser.parse_punctuation(")")
    else:
        results = [parser.parse_type()]
    resolved = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
    region = parser.parse_region()
    return cls.build(operands=[resolved], result_types=[results], regions=[region],
                     properties=properties, attributes=attrs)


def print_region_op(printer: Printer, op: IRDLOperation) -> None:
    printer.print_string(" (")
    printer.print_list(op.operands, printer.print_operand)
    printer.print_string(")")
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : (")
    printer.print_list([o.type for o in op.operands], printer.print_attribute)
    printer.print_string(") -> ")
    print_result_types(printer, [r.type for r in op.results])
    printer.print_string(" ")
    printer.print_region(op.regions[0], print_entry_block_args=True, print_empty_block=True)


@irdl_op_definition
class YieldOp(TensorYieldOp):
    """Returns the results of the enclosing `stitch.fusion`.

        stitch.yield %a, %b : tensor<4xf32>, tensor<4x8xf32>
    """

    name = "stitch.yield"
    PARENT_ERROR: ClassVar = "stitch.yield must be inside a stitch.fusion"

    @classmethod
    def parents(cls) -> tuple[type[Operation], ...]:
        return (FusionOp,)


@irdl_op_definition
class FusionOp(IRDLOperation):
    """One fusion pattern: graph ops that a single kernel will compute.

    Entry block arguments mirror the operands; `stitch.yield` gives the results.
    Discardable attributes (`pattern`, `score`) record how the explorer chose it.

        %y = stitch.fusion (%x) {pattern = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
        ^bb0(%x0: tensor<4xf32>):
          %e = graph.exp %x0 : tensor<4xf32>
          stitch.yield %e : tensor<4xf32>
        }
    """

    name = "stitch.fusion"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         attributes=attributes or {})

    @property
    def block(self) -> Block:
        return self.body.blocks[0]

    def yielded(self) -> list[SSAValue]:
        """The values the fusion yields (its results, inside the fusion)."""
        last = self.block.last_op
        assert isinstance(last, YieldOp), "the verifier: a fusion ends with stitch.yield"
        return list(last.operands)

    @classmethod
    def parse(cls, parser: Parser) -> FusionOp:
        return parse_region_op(parser, cls, {})

    def print(self, printer: Printer) -> None:
        print_region_op(printer, self)

    def verify_(self) -> None:
        check_region_signature(self, self.body, YieldOp.name)
        for op in self.block.ops:
            if op is self.block.last_op:
                continue
            if not op.name.startswith("graph."):
                raise VerifyException(f"a stitch.fusion may hold only graph ops, found '{op.name}'")
        if not self.outputs:
            raise VerifyException("a stitch.fusion must have at least one result")

    def graph_ops(self) -> list[Operation]:
        return [op for op in self.block.ops if op is not self.block.last_op]



# -- building stitch IR from graph ops ---------------------------------------------------
# Every fusion mode (fusion-explore) and stitch-codegen, for the ops left outside every
# fusion, outline graph ops with these, so a fusion's operands, cloned constants and
# results follow one convention.


def is_free(op: Operation) -> bool:
    """Ops that never become kernels: reshapes are views of contiguous buffers."""
    return isinstance(op, graph.ReshapeOp)


def make_fusion(ops: list[Operation], attributes: dict | None = None) -> FusionOp:
    """Move `ops` (in order, all in one block) into a new stitch.fusion inserted before
    the first of them. Operands defined outside become fusion operands (constants used
    inside are cloned in instead); values used outside become results."""
    inside = set(ops)
    inputs: list[SSAValue] = []
    clones: list[Operation] = []
    seen: set = set()  # inputs and clones so far (the lists keep their order)
    for op in ops:
        for v in op.operands:
            owner = v.owner
            if owner in inside or v in seen or owner in seen:
                continue
            if isinstance(owner, graph.ConstantOp):
                seen.add(owner)
                clones.append(owner)
            else:
                seen.add(v)
                inputs.append(v)
    outputs = [r for op in ops for r in op.results if any(u.operation not in inside for u in r.uses)]
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for v, arg in zip(inputs, block.args):
        arg.name_hint = v.name_hint
    for c in clones:
        copy = c.clone()
        block.add_op(copy)
        mapping[c.results[0]] = copy.results[0]
    first = ops[0]
    moved: dict[SSAValue, SSAValue] = {}
    for op in ops:
        copy = op.clone(value_mapper=mapping)
        block.add_op(copy)
        for old, new in zip(op.results, copy.results):
            mapping[old] = new
            moved[old] = new
    block.add_op(YieldOp([mapping[v] for v in outputs]))
    fusion = FusionOp(inputs, [v.type for v in outputs], Region(block), attributes)
    fusion.location = first.location
    parent = first.parent_block()
    assert parent is not None
    parent.insert_op_before(fusion, first)
    for old, new in zip(outputs, fusion.results):
        new.name_hint = old.name_hint
        old.replace_uses_with_if(new, lambda use: use.operation not in inside)
    for op in reversed(ops):
        op.detach()
        op.erase(safe_erase=False)
    return fusion


def fuse_leftover_constants(f: func.FuncOp) -> None:
    """Constants are cloned into the fusions that use them; one still used outside every
    fusion (the function returns it, or a free reshape of it) becomes a kernel of its
    own, and dead ones disappear."""
    for op in list(f.body.block.ops):
        if isinstance(op, graph.ConstantOp):
            if op.results[0].uses:
                make_fusion([op])
            else:
                op.detach()
                op.erase()


Stitch = Dialect("stitch", [FusionOp, YieldOp], [])
