"""Kernels lowered to gpu IR and printed as PTX in worker processes.

    done = lower_in_workers(scheduled, jobs=2)      # scheduled: stitch-codegen's output
    if done is not None:
        with kernel_cache.ready(done.funcs):        # schedule-to-gpu takes these functions
            ScheduleToGpuPass().apply(ctx, scheduled)
        ptx = done.ptx(scheduled, arch)

Workers are forked (`os.fork`, Linux) after stitch-codegen, so they inherit the
schedule IR and no IR is sent to them. Each lowers its share of the kernels
schedule-to-gpu would lower (the first kernel of each structure) and prints their PTX,
verifies and prints their PTX, and sends back text only: the PTX entries and a stub
of each gpu.func, its signature and attributes over a body of just `gpu.return`. The
stubs are what the host side reads (the launch arguments, the address-table layout);
parsing xDSL IR back costs more than lowering it, so whole functions never cross. The
parent waits meanwhile: the host lowering that follows needs the stubs. The module
that results runs and prints the same PTX as a serial compile, but its kernels are
stubs: a caller that needs the gpu IR itself lowers serially.

With a kernel cache active, the kernels it holds (their PTX entry and stub, keyed by
the kernel under a placeholder name: `ptx_entry_key`) are taken from it and only the
others are lowered, in workers or, where fewer than two are left, in this process; their
entries are written by this process.

Lowering in workers pays when the kernels' lowering outweighs starting the workers.
With ResNet-50 loaded, a pool of two forked workers starts, runs and closes in 0.06 s
(2 shared cores at load 5); a kernel lowers, verifies and prints in about 0.04 CPU s
(ResNet-50: 36 distinct kernels, 1.58 CPU s in workers against 1.36 s in one process),
so with two workers each kernel saves about 0.015 s and the start is paid back from
about 5 kernels; fewer than `MIN_KERNELS` stay serial, with some margin.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TypeGuard

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block

from fsir import cache as kernel_cache
from fsir.codegen.kernel_plans import kernel_structure
from fsir.codegen.latency import bytes_in_flight, estimate_registers, shared_bytes
from fsir.codegen.mappings import lower_kernel
from fsir.dialects import gpu
from fsir.dialects.schedule import KernelOp
from fsir.errors import UserError
from fsir.ir import verify
from fsir.ptx.module import check_arch, emit_kernel, kernels, ptx_module
from fsir.stats import collecting
from fsir.stats import count as tally

MIN_KERNELS = 8

Resources = tuple[int, int, int]
"""A kernel's estimated registers per thread, static shared bytes and bytes a warp keeps
in flight (`fsir.runtime.profile.model_launches` reads them)."""


def resources(fn: gpu.FuncOp) -> Resources:
    return estimate_registers(fn), shared_bytes(fn), bytes_in_flight(fn.body.blocks[0].ops)


def valid_resources(used: object) -> TypeGuard[list[int]]:
    """Whether `used` is `Resources` as JSON holds them (a list of three integers)."""
    return isinstance(used, list) and len(used) == 3 and all(isinstance(n, int) for n in used)


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def jobs_wanted(jobs: int | None) -> int:
    """`jobs`, else FSIR_JOBS, else the usable CPUs; 1 where processes cannot be forked."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if jobs is None:
        text = os.environ.get("FSIR_JOBS", "").strip()
        if not text:
            return usable_cpus()
        try:
            jobs = int(text)
        except ValueError:
            raise UserError(f"FSIR_JOBS={text!r}: expected a number of processes") from None
    return max(1, jobs)


def first_kernels(module: ModuleOp) -> list[KernelOp]:
    """The kernels schedule-to-gpu lowers, in its order: the first of each structure
    in every function it turns into a host function."""
    seen: set[tuple] = set()
    out: list[KernelOp] = []
    for f in module.ops:
        if not isinstance(f, func.FuncOp) or f.is_declaration:
            continue
        if not any(isinstance(t, TensorType) for t in (*f.function_type.inputs, *f.function_type.outputs)):
            continue
        for op in f.body.blocks[0].ops:
            if isinstance(op, KernelOp):
                key = kernel_structure(op)
                if key not in seen:
                    seen.add(key)
                    out.append(op)
    return out


@dataclass
class Lowered:
    """The kernels lowered ahead of schedule-to-gpu: `funcs` for it to take (real ones
    and stubs) and every kernel's PTX entry."""

    funcs: dict[str, gpu.FuncOp] = field(default_factory=dict)
    entries: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> (entry, uses dynamic smem)
    # name -> what the kernel-time model reads of a function's body (`resources`), which its stub lacks
    resources: dict[str, Resources] = field(default_factory=dict)

    def add(self, k: KernelOp, record: dict | None, measure: bool) -> bool:
        """Take `k`'s PTX entry, stub and resources from `record` (a cache entry or a
        worker's result, made under `PLACEHOLDER`); False where it is not a valid one, or
        lacks the resources `measure` asks for."""
        if record is None:
            return False
        entry, uses, stub, used = (record.get(f) for f in ("entry", "uses_dynamic_smem", "stub", "resources"))
        if not (isinstance(entry, str) and isinstance(uses, bool) and isinstance(stub, str)
                and (used is None and not measure or valid_resources(used))):
            return False
        name = k.sym_name.data
        with anonymous(k):
            fn = kernel_cache.parse_function(stub, k)
        if fn is None:
            return False
        fn.sym_name = StringAttr(name)
        self.funcs[name] = fn
        self.entries[name] = (entry.replace(PLACEHOLDER, name), uses)
        if valid_resources(used):
            self.resources[name] = (used[0], used[1], used[2])
        return True

    def ptx(self, lowered: ModuleOp, arch: str) -> str:
        """The PTX module of `lowered` (schedule-to-gpu's output over `funcs`): as
        `print_ptx` prints it, from the entries where a kernel has one."""
        check_arch(arch)
        texts: list[str] = []
        dynamic_smem = False
        for fn in kernels(lowered):
            name = fn.sym_name.data
            entry, uses = self.entries[name] if name in self.entries else emit_kernel(fn)
            texts.append(entry)
            dynamic_smem |= uses
        return ptx_module(texts, dynamic_smem, arch)


# what forked workers read: set before the pool starts, inherited through fork
_SHARED: list[KernelOp] = []
_MEASURE = [False]  # whether workers compute `resources`


def lower_in_workers(module: ModuleOp, jobs: int, measure: bool = False,
                     store: kernel_cache.KernelCache | None = None, arch: str = "") -> Lowered | None:
    """`module`'s kernels (stitch-codegen's output) lowered, verified and printed ahead
    of schedule-to-gpu: those `store` holds (`cached`) read from it, the others by
    `jobs` worker processes while this one waits (so it does not compete with them for
    a CPU), or in this process where fewer than two are left or `jobs` < 2 (and written
    to `store`). None where a kernel refuses to lower (the caller compiles serially,
    which reports or splits it) or a worker fails (with a warning). `measure`: also the
    kernels' `resources`. `arch`: the PTX target, part of the entries' keys."""
    global _SHARED
    firsts = first_kernels(module)
    done = Lowered()
    keys: dict[int, str] = {}
    todo: list[int] = []
    for i, k in enumerate(firsts):
        if store is not None:
            keys[i] = ptx_entry_key(k, arch)
            if done.add(k, store.read_record(keys[i]), measure):
                tally("cache_hits")
                continue
            tally("cache_misses")
        todo.append(i)
    if not todo:
        return done
    if store is None and (len(firsts) < 2 or jobs < 2):
        return None
    _SHARED = firsts
    _MEASURE[0] = measure
    try:
        if len(todo) < 2 or jobs < 2:
            printed, _ = _work(todo)  # (its counts reached this process's scopes already)
            results = [(printed, {})]
        else:
            results = _in_pool(firsts, todo, jobs)
            if results is None:
                return None
    finally:
        _SHARED = []
    for _, counts in results:
        for name, n in counts.items():
            tally(name, n)
    for printed, _ in results:
        if printed is None:
            return None
        for i, entry, uses, stub, used in printed:
            record = {"entry": entry, "uses_dynamic_smem": uses, "stub": stub,
                      "resources": None if used is None else list(used)}
            if not done.add(firsts[i], record, measure):
                return None
            if store is not None:
                store.write_record(keys[i], record)
    return done


def _in_pool(firsts: list[KernelOp], todo: list[int], jobs: int) -> list[tuple[list[Printed] | None,
                                                                              dict[str, int]]] | None:
    """`_work`'s results for the kernels `todo` names, from a pool of forked workers
    (None, with a warning, where one fails)."""
    try:
        with ProcessPoolExecutor(min(jobs, len(todo)), mp_context=multiprocessing.get_context("fork")) as pool:
            # one kernel per task, the largest first: a worker takes the next when it is
            # done, which balances better than any estimate of a kernel's cost
            order = [todo[j] for j in largest_first([firsts[i] for i in todo])]
            return list(pool.map(_work, [[i] for i in order]))
    except Exception as err:  # noqa: BLE001 - any failure of a worker: compile serially instead
        warnings.warn(f"fsir: a compile worker failed ({type(err).__name__}: {err}); lowering serially",
                      RuntimeWarning, stacklevel=3)
        return None


# A kernel is lowered under this name, so that its entry serves every kernel of the same
# op whatever it is called (two models, or two positions in one); the name is put back
# in its PTX and stub when the entry is used.
PLACEHOLDER = "fsir_cached_kernel"


@contextlib.contextmanager
def anonymous(k: KernelOp) -> Iterator[None]:
    """Within: `k` is named `PLACEHOLDER`."""
    name = k.sym_name
    k.sym_name = StringAttr(PLACEHOLDER)
    try:
        yield
    finally:
        k.sym_name = name


def ptx_entry_key(k: KernelOp, arch: str) -> str:
    """The key of `k`'s PTX entry: the op as printed under `PLACEHOLDER` (all lowering
    reads but its name), the PTX target and fsir's fingerprint."""
    with anonymous(k):
        return kernel_cache.entry_key("kernel-ptx", kernel_cache.key_text(k), arch)


def largest_first(ks: list[KernelOp]) -> list[int]:
    """Indices of `ks`, the kernels with the most ops (the longest to lower) first."""
    sizes = [sum(1 for _ in k.walk()) for k in ks]
    return sorted(range(len(ks)), key=lambda i: -sizes[i])


Printed = tuple[int, str, bool, str, Resources | None]  # index, PTX entry, uses dynamic smem, stub, resources


def _work(share: list[int]) -> tuple[list[Printed] | None, dict[str, int]]:
    """In a worker: the kernels `share` names lowered and verified (the parent verifies
    only their stubs), as `Printed`, and the compile counts made; None for a refusal or
    invalid IR."""
    out: list[Printed] = []
    with collecting() as counts:
        try:
            for i in share:
                with anonymous(_SHARED[i]):
                    fn = lower_kernel(_SHARED[i]).func
                for op in fn.body.blocks[0].ops:
                    verify(op)
                entry, uses = emit_kernel(fn)
                used = resources(fn) if _MEASURE[0] else None
                out.append((i, entry, uses, stub_text(fn), used))
        except UserError:
            return None, dict(counts.counts)
    return out, dict(counts.counts)


@contextlib.contextmanager
def stubbed(fns: list[gpu.FuncOp]) -> Iterator[None]:
    """Within: each of `fns` has a body of just `gpu.return` (what `stub_text` prints);
    their bodies are put back after."""
    olds = [_swap_in_stub_body(fn) for fn in fns]
    try:
        yield
    finally:
        for fn, old in zip(fns, olds):
            stub = fn.body.blocks[0]
            fn.body.detach_block(stub)
            stub.erase()
            fn.body.add_block(old)


def stub_text(fn: gpu.FuncOp) -> str:
    """`fn` with its body replaced by `gpu.return`, as IR text: its signature and
    attributes, what the host side reads of a kernel (`fn` is changed)."""
    _swap_in_stub_body(fn)
    return str(fn)


def _swap_in_stub_body(fn: gpu.FuncOp) -> Block:
    """Give `fn` a body of just `gpu.return` (its arguments named as before); the
    detached old body is returned."""
    old = fn.body.blocks[0]
    new = Block(arg_types=[a.type for a in old.args])
    for a, b in zip(old.args, new.args):
        b.name_hint = a.name_hint
    new.add_op(gpu.ReturnOp())
    fn.body.detach_block(old)
    fn.body.add_block(new)
    return old
