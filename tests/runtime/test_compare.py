"""fs-run --check's comparison: tolerances, NaN/inf handling and the float64 allowance."""

import numpy as np

from fsir.parse import parse_module
from fsir.runtime.compare import compare
from fsir.runtime.reference import find_function, run_function, run_function_float64


def test_float_tolerance_and_exact_integers():
    want = np.array([1.0, 2.0, np.nan, np.inf], np.float32)
    assert compare(want.copy(), want).ok
    assert not compare(want + np.float32(1e-2), want).ok
    assert compare(np.array([1, 2]), np.array([1, 2])).ok
    assert not compare(np.array([1, 3]), np.array([1, 2])).ok
    assert not compare(np.zeros(3, np.float32), np.zeros(4, np.float32)).ok


def test_float64_allowance_covers_ill_conditioned_results():
    # x - mean(x) of large values: the f32 reference itself is off by ~1e-1 here.
    src = """
    func.func @f(%x: tensor<4096xf32>) -> tensor<4096xf32> {
      %s = graph.reduce sum %x dims [0] : (tensor<4096xf32>) -> tensor<f32>
      %b = graph.broadcast %s dims [] : (tensor<f32>) -> tensor<4096xf32>
      %n = graph.constant dense<4.096000e+03> : tensor<4096xf32>
      %m = graph.div %b, %n : tensor<4096xf32>
      %y = graph.sub %x, %m : tensor<4096xf32>
      func.return %y : tensor<4096xf32>
    }"""
    f = find_function(parse_module(src, "f.mlir"))
    x = (1e6 + np.random.default_rng(0).standard_normal(4096)).astype(np.float32)
    want, = run_function(f, [x])
    exact, = run_function_float64(f, [x])
    assert exact.dtype == np.float64
    # A result computed with another summation order, as a device would.
    got = (x - np.float32(np.sum(x.astype(np.float64)) / 4096)).astype(np.float32)
    assert not compare(got, want).ok or np.array_equal(got, want)
    assert compare(got, want, exact=exact).ok
    # ...but the allowance does not hide a real bug.
    assert not compare(got + np.float32(1.0), want, exact=exact).ok
