"""Kernel arguments through an address table in global memory.

A kernel's `.param` space is small: 4 KB on every target (32 KB on sm_70+ with PTX ISA
8.1+, `fsir/sim/params.py`). A kernel with thousands of buffers — the `columns` kernel
of thousands of embedding columns takes each column's table, ids and weights — would
overflow it, and ptxas refuses the PTX. `table_arguments` then passes all the kernel's
buffer arguments through one table of their device addresses: the kernel takes the
table (`memref<Nxi64>`) first and its scalar arguments after it, and loads each
buffer's address (`gpu.table_buffer`) in the innermost block that holds all the
buffer's uses, so a column's addresses are loaded only by the warps that run the
column, but outside the loops around them (a column's bag loop). The host builds the
table at the launch (`gpu.address_table`, `host_arguments`).

A table may begin with words (64-bit immediates) and with rows of addresses that the
kernel reads at a run-time offset (`add_table`): a `columns` kernel's clusters share a
code body, and each column's row gives its buffers, sizes and constants. The kernel's
`gpu.table_values` and `gpu.table_entries` attributes (`table_layout`) tell the host
what to write.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import DenseArrayBase, FunctionType, IndexType, IntegerAttr, MemRefType, UnitAttr, i64
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from fsir.dialects import gpu
from fsir.dialects.graph import DYN
from fsir.dialects.schedule import int_values
from fsir.lowering.scalar import Cursor
from fsir.ptx import types as T

# The parameter bytes a kernel may take before its buffers go through a table: what
# every target allows (the driver's 4 KB).
PARAM_BUDGET = 4096
# A tabled kernel's table layout (on its gpu.func; `table_layout`): the immediate words
# that begin the table, then the signature positions of the buffers whose addresses follow.
TABLE_VALUES_ATTR = "gpu.table_values"
TABLE_ENTRIES_ATTR = "gpu.table_entries"
# ... and the words the host writes at the launch from scalar arguments (pairs: the word,
# the argument's position in the signature before tabling); the kernel loads them.
TABLE_SIZES_ATTR = "gpu.table_sizes"
LOOPS = (scf.ForOp, scf.WhileOp)


def param_bytes(types: Sequence) -> int:
    """The size of the parameter buffer of a kernel taking arguments of `types` (a
    buffer is a 64-bit address; natural alignment, as the driver packs it)."""
    off = 0
    for t in types:
        size = 8 if isinstance(t, MemRefType) else _scalar_bytes(t)
        off = (off + size - 1) // size * size + size
    return off


def _scalar_bytes(t) -> int:
    ptype = T.param_type(t)
    return max(1, int("".join(c for c in ptype if c.isdigit())) // 8)


def is_tabled(func: gpu.FuncOp) -> bool:
    """Whether `func` takes its buffers through an address table (`table_arguments`)."""
    return gpu.ADDRESS_TABLE_ATTR in func.attributes


def _ints(func: gpu.FuncOp, name: str) -> list[int]:
    a = func.attributes.get(name)
    return [] if a is None else [int(x) for x in int_values(a)]


def table_layout(func: gpu.FuncOp) -> tuple[list[int], list[int]]:
    """A tabled `func`'s table: its immediate words (0 for a word a scalar argument gives,
    `table_sizes`), then the positions (in the signature before tabling) of the buffer
    arguments whose addresses follow them."""
    return _ints(func, TABLE_VALUES_ATTR), _ints(func, TABLE_ENTRIES_ATTR)


def table_sizes(func: gpu.FuncOp) -> dict[int, int]:
    """A tabled `func`'s words that the host writes from scalar arguments: word -> the
    argument's position in the signature before tabling (the kernel does not take it)."""
    pairs = _ints(func, TABLE_SIZES_ATTR)
    return dict(zip(pairs[::2], pairs[1::2]))


def add_table(func: gpu.FuncOp, values: Sequence[int | BlockArgument], rows: Sequence[BlockArgument]
              ) -> BlockArgument:
    """Give `func` its address table now, as its first argument, beginning with the words
    `values` (an int, or a scalar argument whose value the host writes: a run-time size)
    then the addresses of `rows` (buffer arguments; repeats allowed), for code that reads
    a row picked at run time (`gpu.table_buffer` with an offset, a load of a value): the
    rows of a `columns` kernel's clusters. `table_arguments` then passes the other
    buffers through it too, whatever the parameter budget, and drops the scalars that
    went into the table from the signature."""
    body = func.body.blocks[0]
    positions = [a.index for a in rows]  # (before the table shifts them)
    sizes = [x for q, w in enumerate(values) if isinstance(w, BlockArgument) for x in (q, w.index)]
    table = body.insert_arg(MemRefType(i64, [DYN]), 0)
    table.name_hint = "table"
    func.attributes[gpu.ADDRESS_TABLE_ATTR] = UnitAttr()
    func.attributes[TABLE_VALUES_ATTR] = DenseArrayBase.from_list(
        i64, [0 if isinstance(w, BlockArgument) else w for w in values])
    func.attributes[TABLE_ENTRIES_ATTR] = DenseArrayBase.from_list(i64, positions)
    if sizes:
        func.attributes[TABLE_SIZES_ATTR] = DenseArrayBase.from_list(i64, sizes)
    return table


def table_arguments(func: gpu.FuncOp, budget: int | None = None) -> bool:
    """Pass `func`'s buffer arguments through an address table when its parameters
    would take more than `budget` bytes (default `PARAM_BUDGET`) or it has a table
    already (`add_table`); True if it did."""
    budget = PARAM_BUDGET if budget is None else budget
    inputs = list(func.function_type.inputs.data)
    body = func.body.blocks[0]
    if is_tabled(func):
        table = body.args[0]
        args = list(body.args[1:1 + len(inputs)])
    else:
        if param_bytes(inputs) <= budget:
            return False
        args = list(body.args[:len(inputs)])
        table = add_table(func, [], [])
    values, entries = table_layout(func)
    listed = set(entries)
    entries += [p for p, a in enumerate(args) if isinstance(a.type, MemRefType) and p not in listed]
    func.attributes[TABLE_ENTRIES_ATTR] = DenseArrayBase.from_list(i64, entries)
    first = {p: len(values) + j for j, p in reversed(list(enumerate(entries)))}
    # the table's static type, now that its size is known
    sized = body.insert_arg(MemRefType(i64, [len(values) + len(entries)]), 0)
    sized.name_hint = table.name_hint
    table.replace_all_uses_with(sized)
    body.erase_arg(table)
    table = sized
    positions: dict[Block, dict[Operation, int]] = {}
    buffers = [(p, a) for p, a in enumerate(args) if isinstance(a.type, MemRefType)]
    for p, a in buffers:
        t = a.type
        assert isinstance(t, MemRefType)
        if a.uses:
            load = gpu.TableBufferOp(table, first[p], t)
            load.buffer.name_hint = a.name_hint
            block, before = _placement(a, body, positions)
            block.insert_op_before(load, before)
            a.replace_all_uses_with(load.buffer)
    # a scalar the host writes into the table: the kernel loads it from its word
    sizes = table_sizes(func)
    for q, p in sizes.items():
        a = args[p]
        if a.uses:
            word = arith.ConstantOp(IntegerAttr(q, IndexType()))
            load = memref.LoadOp.get(table, [word.result])
            size = arith.IndexCastOp(load.res, a.type)
            block, before = _placement(a, body, positions)
            for op in (word, load, size):
                block.insert_op_before(op, before)
            a.replace_all_uses_with(size.result)
    tabled = set(sizes.values())
    dropped = [p for p, a in enumerate(args) if isinstance(a.type, MemRefType) or p in tabled]
    for p in reversed(dropped):  # last first: an erasure renumbers the arguments after it
        body.erase_arg(args[p])
    tabled.update(dropped)
    func.function_type = FunctionType.from_lists(
        [table.type, *(a.type for p, a in enumerate(args) if p not in tabled)],
        list(func.function_type.outputs.data))
    func.arg_attrs = None
    return True


def _placement(v: SSAValue, entry: Block, positions: dict[Block, dict[Operation, int]]
               ) -> tuple[Block, Operation]:
    """The innermost block holding every use of `v` and its first op that is or holds one."""
    chains: list[list[tuple[Block, Operation]]] = []
    for use in v.uses:
        chain: list[tuple[Block, Operation]] = []
        op: Operation | None = use.operation
        while op is not None and op.parent is not None:
            chain.append((op.parent, op))
            if op.parent is entry:
                break
            op = op.parent.parent_op()
        chains.append(chain[::-1])  # outermost first
    depth = 0
    while all(len(c) > depth for c in chains) and len({c[depth][0] for c in chains}) == 1:
        depth += 1
    # the table does not change while the kernel runs: the load leaves the loops around
    # the uses (a column's bag loop), not the branches (the warps that run the column)
    while depth > 1 and isinstance(chains[0][depth - 2][1], LOOPS):
        depth -= 1
    block = chains[0][depth - 1][0]
    order = positions.get(block)
    if order is None:
        order = positions[block] = {o: i for i, o in enumerate(block.ops)}
    first = min((c[depth - 1][1] for c in chains), key=lambda o: order[o])
    return block, first


def host_arguments(cursor: Cursor, func: gpu.FuncOp, args: list[SSAValue]) -> list[SSAValue]:
    """The launch operands of `func` for the arguments `args` of its signature before
    tabling: the buffers' address table, then the scalars (unchanged if not tabled)."""
    if not is_tabled(func):
        return args
    values, entries = table_layout(func)
    sizes = table_sizes(func)
    words: list[int | SSAValue] = [args[sizes[q]] if q in sizes else v for q, v in enumerate(values)]
    table = cursor.value(gpu.AddressTableOp([args[p] for p in entries], words))
    table.name_hint = f"{func.sym_name.data}_table"
    tabled = set(sizes.values())
    return [table, *(a for p, a in enumerate(args) if not isinstance(a.type, MemRefType) and p not in tabled)]


__all__ = ["PARAM_BUDGET", "add_table", "host_arguments", "is_tabled", "param_bytes", "table_arguments",
           "table_layout", "table_sizes"]
