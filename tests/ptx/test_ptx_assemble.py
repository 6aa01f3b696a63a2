"""Every PTX the printer produces assembles with ptxas, for sm_80 and sm_90.

Covers the lit_tests/ptx inputs, gpu/roundtrip.mlir, and generated kernels for every
op/type combination (fsir/testing/ptx_cases.py). Also checks the ptxas wrapper's parsing.
"""

from __future__ import annotations

import pytest

from fsir.errors import UserError
from fsir.ptx import print_ptx
from fsir.ptx.ptxas import assemble, find_ptxas, parse_verbose
from fsir.testing.paths import LIT_TESTS
from fsir.testing.ptx import PTX_LIT, parse
from fsir.testing.ptx_cases import cases, cases_module


def test_ptxas_is_installed():
    # The test extra installs ptxas (nvidia-cuda-nvcc-cu12); without it nothing here is checked.
    assert find_ptxas() is not None, "ptxas not found: pip install -e '.[test]'"


ARCHS = ["sm_80", "sm_90"]
LIT_INPUTS = sorted(p for p in PTX_LIT.glob("*.mlir") if p.name != "errors.mlir") + sorted(
    p for p in (LIT_TESTS / "gpu").glob("*.mlir") if "invalid" not in p.name
)


def _check(ptx: str, arch: str) -> None:
    result = assemble(ptx, arch)
    numbered = "\n".join(f"{i + 1:5d} {line}" for i, line in enumerate(ptx.splitlines()))
    assert result.ok, "\n".join(result.errors) + "\n" + numbered[:20000]
    assert result.errors == []


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", LIT_INPUTS, ids=[p.name for p in LIT_INPUTS])
def test_lit_inputs_assemble(path, arch):
    ptx = print_ptx(parse(path.read_text(), str(path)), arch=arch)
    assert f".target {arch}" in ptx
    _check(ptx, arch)


@pytest.mark.parametrize("arch", ARCHS)
def test_generated_kernels_assemble(arch):
    selected = cases()
    assert len(selected) > 100
    ptx = print_ptx(parse(cases_module(selected)), arch=arch)
    assert ptx.count(".visible .entry") == len(selected)
    result = assemble(ptx, arch)
    assert result.ok, "\n".join(result.errors[:20])
    assert set(result.kernels) == {c.name for c in selected}
    assert all(k.registers > 0 and k.spill_stores == 0 for k in result.kernels.values())


def test_usage_report():
    text = (PTX_LIT / "block_reduce.mlir").read_text()
    result = assemble(print_ptx(parse(text)), "sm_80")
    usage = result.kernels["block_sum"]
    assert usage.shared_bytes == 32  # memref<8xf32, 3>
    assert usage.barriers == 1
    assert 0 < usage.registers < 64


def test_assemble_reports_errors():
    bad = ".version 8.7\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tfoo.bar %r1;\n}\n"
    result = assemble(bad, "sm_80")
    assert not result.ok
    assert result.errors and result.errors[0].startswith("line 6:")


def test_parse_verbose():
    log = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_80'
ptxas info    : Function properties for k
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 364 bytes cmem[0]
"""
    (k,) = parse_verbose(log).values()
    assert (k.name, k.registers, k.shared_bytes, k.spill_stores, k.spill_loads, k.stack_bytes, k.barriers) == (
        "k", 40, 1024, 4, 4, 8, 1,
    )


def test_print_ptx_header_and_host_code_ignored():
    text = (PTX_LIT / "vector_add.mlir").read_text()
    ptx = print_ptx(parse(text), arch="sm_90")
    assert ptx.splitlines()[4:7] == [".version 8.7", ".target sm_90", ".address_size 64"]
    assert ".entry host" not in ptx and "launch" not in ptx


def test_bad_arch():
    with pytest.raises(UserError, match="unsupported arch 'sm_70'"):
        print_ptx(parse((PTX_LIT / "vector_add.mlir").read_text()), arch="sm_70")


def test_kernel_signature_matches_printed_params():
    from fsir.ptx import kernel_signature, kernels

    module = parse((PTX_LIT / "narrow_types.mlir").read_text())
    ptx = print_ptx(module)
    for func in kernels(module):
        for p in kernel_signature(func):
            assert f".param .{p.ptx_type} {p.name}" in ptx
    (scalars,) = [f for f in kernels(module) if f.sym_name.data == "scalars"]
    sig = kernel_signature(scalars)
    assert [p.ptx_type for p in sig] == ["u64", "f32", "b16", "b16", "u8", "s8", "b32", "b64", "u64", "f64"]
    assert [p.is_pointer for p in sig][:2] == [True, False]
