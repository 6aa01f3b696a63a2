"""Kernels already built for a module, by fusion and codegen options: a fusion that the
explorer's latency-evaluator generated while timing plans (`fsir/codegen/plan_latency.py`)
is not generated again by `stitch-codegen` when it compiles the same module.

    plans = plans_of(op)                          # the kernels built for op's module
    key = ctx.plan_key()                          # the fusion up to names, and the options
    plans.put(key, Plan(kernel, ctx.values()))
    plan = plans.get(key)                         # a Plan, or None

The plans live as long as the module (passes rewrite it in place), so a compile never
sees kernels chosen under another compile's cost model or patched evaluator.

A kept kernel's operands are the block arguments of the scratch block it was built
from; users clone it with those mapped to their fusion's operands, as `codegen_function`
does for a module's repeated layers, and rename its values after their fusion's
(`Plan.values`: the source fusion's arguments and results, position by position). The
cache holds the most recently used `CAPACITY` kernels.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import IRNode, SSAValue

from fsir.dialects.schedule import KernelOp
from fsir.lowering.kernels import dim_classes

CAPACITY = 256


@dataclass(frozen=True)
class Plan:
    """A detached kernel and the values of the fusion it was built from, in the order
    `FusionContext.values` gives them."""

    kernel: KernelOp
    values: Sequence[SSAValue]

    def rename(self, kernel: KernelOp, values: Sequence[SSAValue]) -> None:
        """Give `kernel` (a copy of this plan's) the value names of the fusion whose
        `values` are given, where a source name stands for one target name."""
        names: dict[str | None, set[str | None]] = {}
        for old, new in zip(self.values, values):
            names.setdefault(old.name_hint, set()).add(new.name_hint)
        for arg, value in zip(kernel.body.block.args, values):  # the fusion's arguments, by position
            arg.name_hint = value.name_hint
        for op in kernel.body.walk():
            _rename(op.results, names)


def _rename(values: Sequence[SSAValue], names: dict[str | None, set[str | None]]) -> None:
    for v in values:
        target = names.get(v.name_hint)
        if target is not None and len(target) == 1:
            v.name_hint = next(iter(target))


class KernelPlans:
    """A bounded map from plan keys to built kernels, least recently used out first."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self._kernels: OrderedDict[tuple, Plan] = OrderedDict()

    def get(self, key: tuple) -> Plan | None:
        plan = self._kernels.get(key)
        if plan is not None:
            self._kernels.move_to_end(key)
        return plan

    def put(self, key: tuple, plan: Plan) -> None:
        self._kernels[key] = plan
        self._kernels.move_to_end(key)
        while len(self._kernels) > self.capacity:
            self._kernels.popitem(last=False)

    def clear(self) -> None:
        self._kernels.clear()

    def __len__(self) -> int:
        return len(self._kernels)


_BY_MODULE: weakref.WeakKeyDictionary[IRNode, KernelPlans] = weakref.WeakKeyDictionary()


def plans_of(node: IRNode) -> KernelPlans:
    """The plans of the top-level object (the module) that holds `node`."""
    top = node.get_toplevel_object()
    plans = _BY_MODULE.get(top)
    if plans is None:
        plans = _BY_MODULE[top] = KernelPlans()
    return plans


def kernel_structure(k: KernelOp) -> tuple:
    """`k` up to names: its properties and argument types, and every op of its body
    (name, operands by position, properties, attributes, result types). Attributes
    compare by value, so equal constants of different layers match without printing."""
    where: dict[SSAValue, tuple[int, int]] = {a: (-1, i) for i, a in enumerate(k.block.args)}
    out: list = [tuple((n, a) for n, a in k.properties.items() if n != "sym_name"),
                 tuple(a.type for a in k.block.args), tuple(r.type for r in k.results)]
    for n, op in enumerate(k.walk()):
        if op is k:
            continue
        out.append((op.name, tuple(where.get(o, (-2, id(o))) for o in op.operands), tuple(op.properties.items()),
                    tuple(op.attributes.items()), tuple(r.type for r in op.results)))
        where.update({r: (n, j) for j, r in enumerate(op.results)})
    # which operand dims share a size argument also depends on the arguments' names
    out.append(tuple(sorted(dim_classes(k).items())))
    return tuple(out)


def kernel_names(k: KernelOp) -> tuple:
    """What `kernel_structure` leaves out: the kernel's symbol and attributes, and the
    name of every value it defines (its gpu.func's names follow them)."""
    names: list[str | None] = [k.sym_name.data, *(a.name_hint for a in k.block.args)]
    for op in k.walk():
        if op is not k:
            names.extend(r.name_hint for r in op.results)
        for region in op.regions:
            for block in region.blocks:
                names.extend(a.name_hint for a in block.args)
    return (tuple(k.attributes.items()), tuple(names))
