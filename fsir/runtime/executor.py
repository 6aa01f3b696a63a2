"""Run a lowered module: its host function on the host, its kernels on a device.

    lowered = fsir.pipeline.lower(module)                # graph → stitch → schedule → gpu
    outputs, stats = execute(lowered, inputs, device)   # host function, kernels on a device

`execute` interprets the host `func.func` that schedule-to-gpu produced: `index`
arithmetic and `memref.dim` in Python, `cf.assert` as a run-time check (a failure is
the user's error, naming the compared sizes), `memref.alloc` as device buffers,
`memref.reinterpret_cast` (flattening and free reshapes) as views sharing the viewed
buffer's device memory, `memref.get_global` as the constant copied to the device, and
each `gpu.launch_func` as one launch, with the module's PTX printed and loaded once.
The launches of one tile-synchronised pipeline (tagged `#gpu.stage<pipeline P, ...>`,
fsir/lowering/tile_sync.py) are issued together through `Device.launch_pipeline`, each
on its stream, and `gpu.memset` fills a buffer (zeroes the pipeline's semaphores).
The device is any fsir.runtime.device.Device (the simulator by default, or a GPU);
outputs are copied back as numpy arrays and every buffer the run allocated is freed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
from xdsl.dialects import arith, cf, func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue

from fsir.dialects import gpu
from fsir.dialects.graph import DYN, constant_array, fmt_shape, numpy_dtype
from fsir.errors import UserError
from fsir.ir import location_of
from fsir.runtime.device import BufferTable, DeviceBuffer, LaunchRequest
from fsir.runtime.profile import LaunchRecord, attach_timelines, launch_record

_PTX_CACHE: dict[tuple[int, str], tuple[ModuleOp, str]] = {}


def module_ptx(lowered: ModuleOp, arch: str = "sm_80") -> str:
    """The PTX of a lowered module, printed once per module object and arch."""
    key = (id(lowered), arch)
    cached = _PTX_CACHE.get(key)
    if cached is None or cached[0] is not lowered:
        from fsir.pipeline import PipelineOptions, emit_ptx

        cached = (lowered, emit_ptx(lowered, PipelineOptions(arch=arch)))
        _PTX_CACHE[key] = cached
    return cached[1]


def host_function(lowered: ModuleOp, entry: str | None = None) -> func.FuncOp:
    funcs = [op for op in lowered.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if entry is not None:
        funcs = [f for f in funcs if f.sym_name.data == entry]
    if not funcs:
        raise UserError(f"no host function{'' if entry is None else ' @' + entry} in the lowered module")
    return funcs[0]


_INT_BINARY = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: lambda a, b: a // b,
    arith.RemUIOp: lambda a, b: a % b,
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.MaxSIOp: max,
    arith.MinSIOp: min,
    arith.MaxUIOp: max,
    arith.MinUIOp: min,
    arith.AndIOp: lambda a, b: a & b,
    arith.OrIOp: lambda a, b: a | b,
}
_CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b, 3: lambda a, b: a <= b,
         4: lambda a, b: a > b, 5: lambda a, b: a >= b, 6: lambda a, b: a < b, 7: lambda a, b: a <= b,
         8: lambda a, b: a > b, 9: lambda a, b: a >= b}


def execute(lowered: ModuleOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray], device=None,
            entry: str | None = None, ptx: str | None = None, record: list[LaunchRecord] | None = None,
            progress: bool | None = None, keep_outputs: bool = False):
    """Run the host function on `inputs` on `device` (default: the simulator); returns
    (outputs as numpy arrays shaped like the function's results, summed launch stats).
    An input may be a `DeviceBuffer` of `device` (used in place: no copy, not freed).
    `keep_outputs`: the outputs are the device buffers themselves (not copied back, and
    not freed: they belong to the caller).
    `ptx` is the module's PTX when already printed (default: `module_ptx(lowered)`).
    `record`: a list that receives one LaunchRecord per launch (fsir/runtime/profile.py).
    `progress`: the simulator's progress bar (fsir/runtime/progress.py): None on a terminal
    for runs longer than two seconds, False never, True always."""
    from fsir.runtime.device import SimDevice

    device = device or SimDevice()
    f = host_function(lowered, entry)
    records: list[LaunchRecord] = []
    log_from, timelines_from = (len(device.launch_log), len(device.timelines)) if isinstance(device, SimDevice) \
        else (0, 0)
    with _progress(device, f, progress) as bar:
        result = _execute(lowered, f, inputs, device, ptx, records, bar, keep_outputs)
    if record is not None:
        if isinstance(device, SimDevice):
            records = attach_timelines(records, device, log_from, timelines_from)
        record.extend(records)
    return result


def _progress(device, f: func.FuncOp, enabled: bool | None):
    """The simulator's progress bar over `f`'s launches (none on other devices: a GPU is fast)."""
    from fsir.runtime.device import SimDevice

    if not isinstance(device, SimDevice) or enabled is False:
        return nullcontext(None)
    from fsir.runtime.progress import sim_progress

    launches = sum(1 for op in f.body.blocks[0].ops if isinstance(op, gpu.LaunchFuncOp))
    return sim_progress(launches, enabled=enabled)


def _execute(lowered: ModuleOp, f: func.FuncOp, inputs, device, ptx: str | None, records: list[LaunchRecord],
             bar, keep_outputs: bool = False) -> tuple[list[Any], Any]:
    args = list(f.body.blocks[0].args)
    if isinstance(inputs, Mapping):
        inputs = [inputs[a.name_hint or f"arg{i}"] for i, a in enumerate(args)]
    if len(inputs) != len(args):
        raise UserError(f"@{f.sym_name.data} takes {len(args)} arguments, got {len(inputs)}", location_of(f))
    env: dict[SSAValue, Any] = {}  # index values (int) and DeviceBuffers
    owned: list[DeviceBuffer] = []  # buffers this run allocated (views excluded)
    for i, (a, x) in enumerate(zip(args, inputs)):
        t = a.type
        assert isinstance(t, MemRefType)
        if isinstance(x, DeviceBuffer):  # the caller's device memory, used in place
            env[a] = _check_buffer(i, a, x, t, f)
            continue
        x = np.require(np.asarray(x).astype(numpy_dtype(t.element_type), copy=False), requirements="C")
        shape = t.get_shape()
        if x.ndim != len(shape) or any(d != DYN and d != s for d, s in zip(shape, x.shape)):
            raise UserError(f"argument {i} (%{a.name_hint or i}): expected shape {fmt_shape(shape)}, "
                            f"got {fmt_shape(x.shape)}", location_of(f))
        env[a] = device.to_device(x)
        owned.append(env[a])
    handle = None
    stats = None
    pipeline: list[LaunchRequest] = []  # launches of the current pipeline, not yet issued
    pipeline_id: int | None = None

    def issue() -> None:
        nonlocal stats, pipeline_id
        if pipeline:
            for r, s in zip(pipeline, device.launch_pipeline(list(pipeline))):
                stats = s if stats is None else stats + s
                records.append(launch_record(r.kernel, r.grid, r.block, r.shared_bytes, s, r.stream))
        pipeline.clear()
        pipeline_id = None

    try:
        for op in f.body.blocks[0].ops:
            if isinstance(op, func.ReturnOp):
                issue()
                if keep_outputs:
                    kept = [env[v] for v in op.operands]
                    owned[:] = [b for b in owned if not any(_same_memory(b, k) for k in kept)]
                    return kept, stats
                return [_to_host(device, env[v]) for v in op.operands], stats
            if isinstance(op, gpu.LaunchFuncOp):
                if handle is None:
                    handle = device.load(ptx if ptx is not None else module_ptx(lowered))
                grid = tuple(int(env[v]) for v in (op.gridSizeX, op.gridSizeY, op.gridSizeZ))
                block = tuple(int(env[v]) for v in (op.blockSizeX, op.blockSizeY, op.blockSizeZ))
                smem = 0 if op.dynamicSharedMemorySize is None else int(env[op.dynamicSharedMemorySize])
                kargs = [env[v] for v in op.kernelOperands]
                kernel = op.kernel.nested_references.data[-1].data
                if bar is not None:
                    bar.launch_started(grid[0] * grid[1] * grid[2])
                stage = op.attributes.get(gpu.STAGE_ATTR)
                if isinstance(stage, gpu.StageAttr):
                    if pipeline_id != stage.pipeline:
                        issue()
                    pipeline_id = stage.pipeline
                    pipeline.append(LaunchRequest(handle, kernel, grid, block, kargs, smem, stage.stream,
                                                  stage.priority))
                    continue
                issue()
                s = device.launch(handle, kernel, grid, block, kargs, smem)
                stats = s if stats is None else stats + s
                records.append(launch_record(kernel, grid, block, smem, s))
                continue
            if isinstance(op, gpu.MemsetOp):
                issue()  # (a pipeline in flight may use the buffer)
                buf = env[op.dst]
                device.copy_to(buf, np.full(buf.shape, env[op.value], buf.dtype))
                continue
            if isinstance(op, cf.AssertOp):
                _check(op, env)
                continue
            if op.results:
                env[op.results[0]] = _host_value(op, env, lowered, device, owned)
        raise UserError(f"@{f.sym_name.data} has no func.return", location_of(f))
    finally:
        for buf in owned:
            device.free(buf)


def _check_buffer(i: int, a: SSAValue, buf: DeviceBuffer, t: MemRefType, f: func.FuncOp) -> DeviceBuffer:
    shape = t.get_shape()
    if len(buf.shape) != len(shape) or any(d != DYN and d != s for d, s in zip(shape, buf.shape)) \
            or buf.dtype != np.dtype(numpy_dtype(t.element_type)):
        raise UserError(f"argument {i} (%{a.name_hint or i}): expected a {fmt_shape(shape)} buffer of "
                        f"{np.dtype(numpy_dtype(t.element_type))}, got {fmt_shape(buf.shape)} of {buf.dtype}",
                        location_of(f))
    return buf


def _same_memory(a: DeviceBuffer, b: DeviceBuffer) -> bool:
    """Whether `b` is `a` or a view of it (same address; on the simulator, shared arrays)."""
    if isinstance(a.handle, np.ndarray) and isinstance(b.handle, np.ndarray):
        return np.shares_memory(a.handle, b.handle)
    return a.handle is b.handle or a.handle == b.handle


def _to_host(device, buf: DeviceBuffer) -> np.ndarray:
    return device.copy_from(buf)


def _view(buf: DeviceBuffer, shape: list[int]) -> DeviceBuffer:
    """The same device memory with another shape (a reinterpret_cast)."""
    if int(np.prod(shape, dtype=np.int64)) * buf.dtype.itemsize != buf.nbytes:
        raise UserError(f"cannot view a buffer of shape {fmt_shape(buf.shape)} as {fmt_shape(shape)}")
    handle = buf.handle.reshape(shape) if isinstance(buf.handle, np.ndarray) else buf.handle
    return DeviceBuffer(buf.device, tuple(shape), buf.dtype, handle)


def _check(op: cf.AssertOp, env: dict) -> None:
    """A failed `cf.assert` is the user's error at the op's location; when its condition
    is a comparison (or an `or` of comparisons, the first naming the values), the
    message names the compared values."""
    if env[op.arg]:
        return
    message = op.msg.data
    cond = op.arg.owner
    while isinstance(cond, (arith.OrIOp, arith.AndIOp)):
        cond = cond.operands[0].owner
    if isinstance(cond, arith.CmpiOp):
        message += f": {env[cond.lhs]} vs {env[cond.rhs]}"
    raise UserError(message, location_of(op))


def _host_value(op: Operation, env: dict, module: ModuleOp, device, owned: list):
    def get(v: SSAValue) -> Any:
        return env[v]

    if isinstance(op, arith.ConstantOp):
        value = op.value
        assert isinstance(value, IntegerAttr)
        return value.value.data
    if type(op) in _INT_BINARY:
        return _INT_BINARY[type(op)](get(op.operands[0]), get(op.operands[1]))
    if isinstance(op, arith.CmpiOp):
        return _CMPI[op.predicate.value.data](get(op.lhs), get(op.rhs))
    if isinstance(op, arith.SelectOp):
        return get(op.lhs) if get(op.cond) else get(op.rhs)
    if isinstance(op, memref.DimOp):
        return get(op.source).shape[get(op.index)]
    if isinstance(op, memref.AllocOp):
        t = op.memref.type
        dyn = iter(get(v) for v in op.dynamic_sizes)
        shape = [next(dyn) if d == DYN else d for d in t.get_shape()]
        buf = device.alloc(tuple(shape), numpy_dtype(t.element_type))
        owned.append(buf)
        return buf
    if isinstance(op, memref.ReinterpretCastOp):
        dyn = iter(get(v) for v in op.sizes)
        sizes = [next(dyn) if s == DYN else s for s in op.static_sizes.get_values()]
        return _view(get(op.source), sizes)
    if isinstance(op, gpu.AddressTableOp):
        return BufferTable([get(b) for b in op.buffers], [get(w) if isinstance(w, SSAValue) else w for w in op.words()])
    if isinstance(op, memref.GetGlobalOp):
        name = op.name_.root_reference.data
        for g in module.ops:
            if isinstance(g, memref.GlobalOp) and g.sym_name.data == name:
                value = g.initial_value
                if not isinstance(value, DenseIntOrFPElementsAttr):
                    raise UserError(f"memref.global @{name} has no initial value", location_of(g))
                buf = device.to_device(np.require(constant_array(value), requirements="C"))
                owned.append(buf)
                return buf
        raise UserError(f"no memref.global @{name}", location_of(op))
    raise UserError(f"the host interpreter cannot run '{op.name}'", location_of(op))
