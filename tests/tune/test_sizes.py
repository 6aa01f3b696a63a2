"""`fs-tune --sizes`: a model with a symbolic dim tuned specialised to each size, its
records carrying the sizes, and `fsir.compile(..., tuning_log=)` dispatching on the
size at run time: tuned sizes run their tuned kernels, other sizes the symbolic ones,
every size exactly (on the simulator)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from tune_graphs import EXAMPLES

import fsir
from fsir.api import SizedExecutable
from fsir.dialects.graph import DYN, shape_of
from fsir.errors import UserError
from fsir.parse import parse_module
from fsir.tools.fs_run import main_impl as fs_run
from fsir.tune.cli import main
from fsir.tune.database import Database, Record
from fsir.tune.sizes import SizeList, specialize, symbols

DOT = """func.func @f(%a: tensor<?x64xf16> {graph.dims = #graph.dims<[B, 64]>}, %b: tensor<64x64xf16>)
    -> tensor<?x64xf16> {
  %d = graph.dot %a, %b : (tensor<?x64xf16>, tensor<64x64xf16>) -> tensor<?x64xf16>
  func.return %d : tensor<?x64xf16>
}
"""


def test_sizes_option():
    assert SizeList.parse("B=1,8,64,8") == SizeList("B", (1, 8, 64))
    for bad in ("B", "=1", "B=1,x", "B=0", "1B=2"):
        with pytest.raises(UserError, match="--sizes"):
            SizeList.parse(bad)


def test_specialize_makes_the_symbols_dims_static():
    module = parse_module(DOT, "dot.mlir")
    assert symbols(module) == {"B": [(0, 0)]}
    static = specialize(module, "B", 48)
    assert "tensor<48x64xf16>" in str(static) and "?" not in str(static)
    with pytest.raises(UserError, match=r"no symbolic dim 'S' \(its symbols: B\)"):
        specialize(module, "S", 4)
    # two symbols: one made static, the other kept, with its random inputs' sizes
    ln = parse_module((EXAMPLES / "layernorm_dynamic.mlir").read_text(), "ln.mlir")
    assert set(symbols(ln)) == {"x_d0", "x_d1"}
    half = specialize(ln, "x_d0", 8)
    f = next(iter(half.ops))
    assert [list(shape_of(a.type)) for a in f.args] == [[8, DYN], [DYN], [DYN]]  # type: ignore[attr-defined]
    assert "fsir.runtime_shape = array<i64: 8, 96>" in str(half)


def test_records_carry_their_sizes(tmp_path):
    log = tmp_path / "t.jsonl"
    db = Database(log, sizes=(("B", 8),))
    rec = Record("k", "gemm", "c", _trace(), 1e-6, None, "", "H100", "sm_80",
                 "model", "0")
    db.add(rec)
    assert '"sizes": {"B": 8}' in log.read_text()
    assert Record.from_json(log.read_text().splitlines()[0]).sizes == (("B", 8),)
    log.write_text(log.read_text().replace('{"B": 8}', '{"B": "8"}'))
    warn = io.StringIO()
    assert Database(log, warn=warn).records == []
    assert "'sizes' must be an object of integers" in warn.getvalue()


def _trace():
    from fsir.tune.space import Decision, Knob, Trace

    return Trace((Decision(Knob.SKETCH, "loop"),))


def test_tuned_at_sizes_and_dispatched_on_the_simulator(tmp_path, capsys):
    model, log = tmp_path / "dot.mlir", tmp_path / "tune.jsonl"
    model.write_text(DOT)
    main([str(model), "--log", str(log), "--sizes", "B=16,48", "--trials", "2", "--mode", "fast", "--workers", "0"])
    table = capsys.readouterr().out
    assert "f_k0 @B=16" in table and "f_k0 @B=48" in table
    records = Database(log).records
    assert {r.sizes for r in records} == {(("B", 16),), (("B", 48),)}
    # each size's best record, as the log's reader picks it (the first of equal times)
    best = {n: min((r for r in records if r.ok and r.sizes == (("B", n),)), key=lambda r: r.seconds or 0)
            for n in (16, 48)}

    exe = fsir.compile(str(model), tuning_log=str(log))
    generic = fsir.compile(str(model))
    assert isinstance(exe, SizedExecutable) and exe.sizes == (16, 48)
    rng = np.random.default_rng(0)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    for size in (16, 5, 48):
        a = rng.standard_normal((size, 64)).astype(np.float16)
        got = exe.run([a, b], device="sim")[0]
        want = a.astype(np.float32) @ b.astype(np.float32)
        assert got.shape == (size, 64)
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(got, generic.run([a, b], device="sim")[0], rtol=2e-2, atol=2e-2)
        assert exe.last_size_compiled == (size if size in (16, 48) else None)
        if size in (16, 48):
            (kernel,) = exe.specialized[size].kernels
            assert kernel.config == best[size].config  # the size's tuned configuration
            assert exe.last_stats is not None and exe.last_stats.launches == 1

    # fs-run knows its inputs before it compiles: a tuned size is compiled specialised to it
    for size, said in ((48, True), (5, False)):
        rc = fs_run([str(model), "--tuning-log", str(log), "--dynamic-size", str(size), "--check", "--device", "sim"])
        err = capsys.readouterr().err
        assert rc == 0 and ("tuned at this size (48): compiled specialised to it" in err) == said


def test_measuring_inputs_of_a_model_keeping_other_symbols():
    """Specialised to x_d0, LayerNorm keeps x_d1 `?`: measured at its runtime_shape (96)."""
    from fsir.tune.measure import random_inputs

    ln = parse_module((EXAMPLES / "layernorm_dynamic.mlir").read_text(), "ln.mlir")
    half = specialize(ln, "x_d0", 8)
    exe = fsir.compile(half)
    assert [a.shape for a in random_inputs(exe.module, text=str(half))] == [(8, 96), (96,), (96,)]
    assert [a.shape for a in random_inputs(exe.module)] == [(8, 8), (8,), (8,)]  # DYNAMIC_SIZE without a hint
