"""`schedule-to-gpu`: schedule.kernels → a `gpu.module` of kernels + a host function.

For each function holding schedule.kernels, every kernel becomes a `gpu.func` in
`gpu.module @kernels` (by the kernel's mapping, `fsir.codegen.mappings`), and the function becomes a host
`func.func` of the same name over memrefs that

- reads dynamic sizes with `memref.dim` and derives the others (fsir/lowering/shapes.py),
- checks that sizes which must agree do (`cf.assert`, once per pair of sizes),
- allocates each kernel's outputs (`memref.alloc`),
- passes every buffer flattened to `memref<?xT>` (`memref.reinterpret_cast`, a view),
  non-splat constants as `memref.global`s, and the inputs' dynamic sizes as `index`es,
- launches the kernels in order (`gpu.launch_func`, grid from `arith.constant`s or
  computed from the sizes),
- turns free reshapes into views (`memref.reinterpret_cast`), and returns the outputs.

```mlir
func.func @f(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = memref.alloc() : memref<4x8xf32>
  %c32 = arith.constant 32 : index
  %x_flat = memref.reinterpret_cast %x to offset: [0], sizes: [%c32], strides: [1] : memref<4x8xf32> to memref<?xf32>
  ...
  gpu.launch_func @kernels::@f_k0 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%x_flat : memref<?xf32>, %y_flat : memref<?xf32>)
  func.return %y : memref<4x8xf32>
}
```
"""  # noqa: E501 (an IR example)

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from fsir.cache import lowered_kernel
from fsir.codegen.kernel_plans import kernel_structure
from fsir.codegen.mappings import has_trial, lower_kernel, mapping_of
from fsir.dialects import gpu, graph
from fsir.dialects.graph import DYN, shape_of
from fsir.dialects.schedule import DYNAMIC, KernelOp, StageOp, TileDepOp
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.lowering.kernels import erase_unused_arith, extra_arguments, shared_layout
from fsir.lowering.param_table import host_arguments, is_tabled
from fsir.lowering.scalar import Cursor, Index, IndexBuilder
from fsir.lowering.shapes import DimChecks, ShapeCalc, bind_declared_dims
from fsir.lowering.split_k import buffer_sizes, split_of
from fsir.lowering.tile_sync import TileSyncPlan

GPU_MODULE = "kernels"


def memref_of(t: Attribute) -> MemRefType:
    """The buffer of a function argument or result (a tensor)."""
    assert isinstance(t, TensorType)
    return MemRefType(t.element_type, list(t.get_shape()))


class HostLowering:
    def __init__(self, module: ModuleOp, gpu_module: gpu.ModuleOp, f: func.FuncOp,
                 lowered: dict[tuple, str] | None = None, tabled: dict[str, gpu.FuncOp] | None = None):
        self.module = module
        self.gpu_module = gpu_module
        # kernels of equal structure (a model's repeated layers) share one gpu.func
        self.lowered: dict[tuple, str] = {} if lowered is None else lowered
        # the kernels among them that take an address table (param_table.py)
        self.tabled: dict[str, gpu.FuncOp] = {} if tabled is None else tabled
        self.f = f
        inputs = [memref_of(t) for t in f.function_type.inputs.data]
        outputs = [memref_of(t) for t in f.function_type.outputs.data]
        self.host = func.FuncOp(f.sym_name.data, (inputs, outputs))
        self.host.location = f.location
        self.block = self.host.body.blocks[0]
        self.cursor = Cursor(self.block)
        self.ib = IndexBuilder(self.cursor)
        self.buffers: dict[SSAValue, SSAValue] = {}  # graph value -> host memref
        self.dims: dict[SSAValue, list[Index]] = {}  # graph value -> host sizes
        self.flats: dict[SSAValue, SSAValue] = {}
        self.checks = DimChecks(self.ib)
        self.split_k: dict[str, list[SSAValue]] = {}  # a split-K kernel's buffers, by kernel
        self.sync = TileSyncPlan(f)  # tile-synchronised pipelines (fsir/lowering/tile_sync.py)
        for old, new in zip(f.body.blocks[0].args, self.block.args):
            new.name_hint = old.name_hint
            self.buffers[old] = new
            self.dims[old] = [
                s if s != DYN else self.cursor.value(memref.DimOp(new, self.ib.const(d)))
                for d, s in enumerate(shape_of(old.type))
            ]
        bind_declared_dims(f, self.dims, self.ib)

    def lower(self) -> func.FuncOp:
        for op in self.f.body.blocks[0].ops:
            if isinstance(op, KernelOp):
                self.launch(op)
            elif isinstance(op, graph.ReshapeOp):
                self.reshape(op)
            elif isinstance(op, (StageOp, TileDepOp)):
                continue  # applied to the kernels they name
            elif isinstance(op, func.ReturnOp):
                self.cursor.insert(func.ReturnOp(*[self.buffers[v] for v in op.operands]))
            else:
                raise UserError(f"'{op.name}' op is left outside every kernel; run stitch-codegen before "
                                "schedule-to-gpu", location_of(op))
        return self.host

    def flat(self, buf: SSAValue, dims: list[Index]) -> SSAValue:
        """`buf` as a 1-D `memref<?xT>` view (what kernels take)."""
        if buf in self.flats:
            return self.flats[buf]
        t = buf.type
        assert isinstance(t, MemRefType)
        size = self.ib.prod(dims)
        view = self.cursor.value(reinterpret(buf, MemRefType(t.element_type, [DYN]), [size], [1], self.ib))
        view.name_hint = f"{buf.name_hint}_flat" if buf.name_hint else None
        self.flats[buf] = view
        return view

    def launch(self, k: KernelOp) -> None:
        staged = k.sym_name.data in self.sync.stages
        structure = kernel_structure(k)
        key = structure if not staged else ("tile-sync", k.sym_name.data)
        name = self.lowered.get(key)
        if name is None:
            # a tile-sync stage's function is rewritten per pipeline: not cached
            fn = lowered_kernel(k, lambda k: lower_kernel(k, structure).func, cacheable=not staged,
                                in_memory=has_trial(k, structure))
            if staged:
                self.sync.rewrite(k, fn)
            self.gpu_module.body.blocks[0].add_op(fn)
            name = self.lowered[key] = k.sym_name.data
            if is_tabled(fn):
                self.tabled[name] = fn
        constants, dynamic_dims = extra_arguments(k)
        shapes = ShapeCalc(self.ib, {a: self.dims[v] for a, v in zip(k.block.args, k.operands)})
        for g in k.groups():
            for op in g.block.ops:
                self.checks.emit(op, shapes)
        args: list[SSAValue] = []
        for v in k.operands:
            args.append(self.flat(self.buffers[v], self.dims[v]))
        for r in k.results:
            dims = shapes.dims(r)
            t = r.type
            assert isinstance(t, TensorType)
            dynamic = [self.ib.ssa(d) for d, s in zip(dims, t.get_shape()) if s == DYN]
            buf = self.cursor.value(memref.AllocOp(dynamic, [], memref_of(t)))
            buf.name_hint = r.name_hint
            self.buffers[r] = buf
            self.dims[r] = dims
            args.append(self.flat(buf, dims))
        for c in constants:
            args.append(self.constant_buffer(c))
        for i, d in dynamic_dims:
            args.append(self.ib.ssa(self.dims[k.operands[i]][d]))
        if name in self.tabled:
            args = host_arguments(self.cursor, self.tabled[name], args)
        grid, block = k.launch()
        grid_values = [self.ib.ssa(g if g != DYNAMIC else self.grid_dim(k, axis, shapes))
                       for axis, g in enumerate(grid)]
        block_values = [self.ib.ssa(b) for b in block]
        if split_of(k) > 1:
            args += self.split_buffers(k, name)
        if staged:
            args += self.sync.host_arguments(name, self.cursor, self.ib, self.flat)
            if self.sync.stages[name].wait_kernel is not None:
                self.wait_kernel(k)
        _, dynamic_smem = shared_layout(k)
        smem = self.cursor.value(arith.ConstantOp(IntegerAttr(dynamic_smem, i32))) if dynamic_smem else None
        launch = gpu.LaunchFuncOp(SymbolRefAttr(GPU_MODULE, [name]), grid_values, block_values, args, smem)
        launch.location = k.location
        if staged:
            launch.attributes[gpu.STAGE_ATTR] = self.sync.stage_attr(name)
        self.cursor.insert(launch)

    def split_buffers(self, k: KernelOp, name: str) -> list[SSAValue]:
        """A split-K kernel's semaphores (zeroed; the kernel leaves them zero, so its
        launches share them) and workspace, unless it reduces in its output
        (`fsir/lowering/split_k.py`)."""
        if name not in self.split_k:
            sems, floats = buffer_sizes(k)
            sem_buf = self.cursor.value(memref.AllocOp([], [], MemRefType(i32, [sems])))
            sem_buf.name_hint = f"{name}_sems"
            views = [self.flat(sem_buf, [sems])]
            if floats:
                work = self.cursor.value(memref.AllocOp([], [], MemRefType(f32, [floats])))
                work.name_hint = f"{name}_workspace"
                views.append(self.flat(work, [floats]))
            self.cursor.insert(gpu.MemsetOp(views[0], self.cursor.value(arith.ConstantOp(IntegerAttr(0, i32)))))
            self.split_k[name] = views
        return self.split_k[name]

    def wait_kernel(self, k: KernelOp) -> None:
        """The one-thread kernel launched on a consumer's stream before it."""
        fn = self.sync.wait_kernel(k.sym_name.data)
        self.gpu_module.body.blocks[0].add_op(fn)
        one = self.ib.ssa(1)
        args = self.sync.host_arguments(fn.sym_name.data, self.cursor, self.ib, self.flat)
        launch = gpu.LaunchFuncOp(SymbolRefAttr(GPU_MODULE, [fn.sym_name.data]), [one] * 3, [one] * 3, args)
        launch.location = k.location
        launch.attributes[gpu.STAGE_ATTR] = self.sync.stage_attr(k.sym_name.data)
        self.cursor.insert(launch)

    def grid_dim(self, k: KernelOp, axis: int, shapes: ShapeCalc) -> Index:
        """A launch dim that depends on runtime sizes: the mapping's."""
        return mapping_of(k).grid(k, axis, shapes)

    def constant_buffer(self, c: graph.ConstantOp) -> SSAValue:
        """A non-splat constant as a `memref.global` the host passes in."""
        t = c.result.type
        assert isinstance(t, TensorType)
        name = f"{self.f.sym_name.data}_cst{sum(1 for op in self.module.ops if isinstance(op, memref.GlobalOp))}"
        mt = memref_of(t)
        glob = memref.GlobalOp.get(StringAttr(name), mt, c.value, StringAttr("private"), constant=UnitAttr())
        self.module.body.blocks[0].insert_op_before(glob, self.gpu_module)
        buf = self.cursor.value(memref.GetGlobalOp(name, mt))
        buf.name_hint = "cst"
        return self.flat(buf, list(t.get_shape()))

    def reshape(self, op: graph.ReshapeOp) -> None:
        """A free reshape: a view of the same contiguous bytes."""
        src = self.buffers[op.input]
        shapes = ShapeCalc(self.ib, {op.input: self.dims[op.input]})
        dims = shapes.dims(op.result)
        strides: list[Index] = [1]
        for d in reversed(dims[1:]):
            strides.append(self.ib.mul(strides[-1], d))
        view = self.cursor.value(reinterpret(src, memref_of(op.result.type), dims, strides[::-1], self.ib))
        view.name_hint = op.result.name_hint
        self.buffers[op.result] = view
        self.dims[op.result] = dims


def reinterpret(src: SSAValue, result: MemRefType, sizes: list[Index], strides: list[Index],
                ib: IndexBuilder) -> memref.ReinterpretCastOp:
    # a `?` result dim takes its size as an operand (xDSL checks static sizes against the type)
    sizes = [ib.ssa(s) if r == DYN else s for s, r in zip(sizes, result.get_shape())]
    dyn_sizes = [ib.ssa(s) for s in sizes if not isinstance(s, int)]
    dyn_strides = [ib.ssa(s) for s in strides if not isinstance(s, int)]
    static_sizes = [s if isinstance(s, int) else DYN for s in sizes]
    static_strides = [s if isinstance(s, int) else DYN for s in strides]
    return memref.ReinterpretCastOp.build(
        operands=[src, [], dyn_sizes, dyn_strides],
        result_types=[result],
        properties={
            "static_offsets": DenseArrayBase.from_list(i64, [0]),
            "static_sizes": DenseArrayBase.from_list(i64, static_sizes),
            "static_strides": DenseArrayBase.from_list(i64, static_strides),
        },
    )


@dataclass(frozen=True)
class ScheduleToGpuPass(ModulePass):
    """schedule.kernel → gpu.module kernels + host func.func with gpu.launch_func."""

    name = "schedule-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # every function over tensors becomes a host function (one made only of free
        # reshapes launches nothing)
        funcs = [f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration
                 and any(isinstance(t, TensorType) for t in (*f.function_type.inputs, *f.function_type.outputs))]
        if not funcs:
            return
        op.attributes["gpu.container_module"] = UnitAttr()
        gpu_module = gpu.ModuleOp(GPU_MODULE)
        op.body.blocks[0].add_op(gpu_module)
        lowered: dict[tuple, str] = {}
        tabled: dict[str, gpu.FuncOp] = {}
        for f in funcs:
            host = HostLowering(op, gpu_module, f, lowered, tabled).lower()
            region_dce(host.body)
            erase_unused_arith(host)
            op.body.blocks[0].insert_op_before(host, f)
            f.detach()
            f.erase(safe_erase=False)
