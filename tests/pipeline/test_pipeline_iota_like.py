"""graph.iota sized at run time by its `like` operand: one compile runs every size,
in every fusion mode, as the reference computes it; without `like` a `?` iota stays a
located refusal."""

from __future__ import annotations

import numpy as np
import pytest

import fsir
from fsir.parse import parse_module
from fsir.runtime import reference

SOURCE = """
func.func @f(%ids: tensor<?x?xi64>, %x: tensor<?x8xf32>) -> (tensor<?xi64>, tensor<?x8xf32>, tensor<?x?xf32>) {
  %p = graph.iota dim 0 like %ids dims [1] : (tensor<?x?xi64>) -> tensor<?xi64>
  %q = graph.iota dim 1 like %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %a = graph.add %x, %q : tensor<?x8xf32>
  %r = graph.iota dim 1 like %ids dims [0, 1] : (tensor<?x?xi64>) -> tensor<?x?xf32>
  %m = graph.mul %r, %r : tensor<?x?xf32>
  func.return %p, %a, %m : tensor<?xi64>, tensor<?x8xf32>, tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("fusion", ["stitch", "xla", "none"])
def test_iota_like_runs_every_size(fusion):
    exe = fsir.compile(SOURCE, fusion=fusion)
    module = parse_module(SOURCE)
    for b, s in [(1, 7), (3, 32), (8, 5)]:
        ids, x = np.zeros((b, s), np.int64), np.full((b, 8), 0.5, np.float32)
        p, a, m = exe.run([ids, x], device="sim")
        cols = np.broadcast_to(np.arange(s, dtype=np.float32), (b, s))
        assert np.array_equal(p, np.arange(s)) and p.dtype == np.int64
        assert np.array_equal(a, x + np.arange(8, dtype=np.float32))
        assert np.array_equal(m, cols * cols)
        want = reference.run(module, [ids, x])
        assert all(np.array_equal(u, v) for u, v in zip(want, (p, a, m)))


def test_a_dynamic_iota_without_like_is_a_located_refusal():
    source = """
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %i = graph.iota dim 0 : tensor<?xf32>
  %y = graph.add %x, %i : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""
    with pytest.raises(fsir.UserError) as err:
        fsir.compile(source)
    assert err.value.loc is not None and "no 'like' operand" in err.value.message
