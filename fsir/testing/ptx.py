"""Helpers for the PTX printer and simulator tests: parse gpu-level IR, print PTX, build kernels."""

from __future__ import annotations

from xdsl.dialects import cf

from fsir.parse import make_context, parse_module
from fsir.ptx import print_ptx
from fsir.testing.paths import LIT_TESTS

PTX_LIT = LIT_TESTS / "ptx"


def context():
    ctx = make_context()
    if "cf" not in ctx.registered_dialect_names:
        ctx.load_dialect(cf.Cf)
    return ctx


def parse(text: str, name: str = "<test>"):
    return parse_module(text, name, context())


def ptx_of(text: str, arch: str = "sm_80") -> str:
    return print_ptx(parse(text), arch=arch)


def module(*kernels: str) -> str:
    """A container module holding one gpu.module with the given gpu.func texts."""
    body = "\n".join(kernels)
    return (
        "builtin.module attributes {gpu.container_module} {\n"
        f"gpu.module @kernels {{\n{body}\n}}\n}}\n"
    )


def elementwise(name: str, in_types: list[str], out_type: str, body: str) -> str:
    """A kernel y[i] = f(x0[i], x1[i], ...) for i < n; `body` defines %r from %a0, %a1..."""
    args = ", ".join(f"%x{k}: memref<?x{t}>" for k, t in enumerate(in_types))
    loads = "\n".join(
        f"      %a{k} = memref.load %x{k}[%i] : memref<?x{t}>" for k, t in enumerate(in_types)
    )
    return f"""
    gpu.func @{name}({args}, %y: memref<?x{out_type}>, %n: index) kernel {{
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {{
{loads}
{body}
        memref.store %r, %y[%i] : memref<?x{out_type}>
      }}
      gpu.return
    }}"""
