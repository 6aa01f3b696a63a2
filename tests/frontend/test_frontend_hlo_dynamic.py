"""HLO dynamic dims (`f32[?,4]`, bounded `f32[<=8,4]`): imported as `?` dims with a
symbol per parameter dim, one compiled module runs any size, and sizes the graph
requires to agree are checked on the host."""

from __future__ import annotations

import numpy as np
import pytest

import fsir
from fsir.dialects.graph import DIMS_ATTR
from fsir.errors import UserError
from fsir.frontend.hlo import import_hlo

HLO = """HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
ENTRY main {
  %x = f32[?,4]{1,0} parameter(0)
  %y = f32[<=8,4]{1,0} parameter(1)
  %s = f32[?,4]{1,0} add(%x, %y)
  %z = f32[] constant(0)
  ROOT %r = f32[?]{0} reduce(%s, %z), dimensions={1}, to_apply=%sum
}
"""


def test_dynamic_dims_are_named():
    m = import_hlo(HLO, "t.hlo")
    f = next(iter(m.ops))
    dims = [a.data[DIMS_ATTR].sizes for a in f.arg_attrs.data]  # type: ignore[union-attr]
    assert dims == [["x_0", 4], ["y_0", 4]]


def test_one_module_runs_any_batch():
    m = fsir.compile(HLO, frontend="hlo")
    rng = np.random.default_rng(0)
    for b in (1, 7, 37):
        x, y = rng.random((b, 4), np.float32), rng.random((b, 4), np.float32)
        out = m.run([x, y], device="sim")
        got = out[0] if isinstance(out, (list, tuple)) else out
        np.testing.assert_allclose(np.asarray(got), (x + y).sum(1), rtol=1e-6)


def test_disagreeing_sizes_are_refused_on_the_host():
    m = fsir.compile(HLO, frontend="hlo")
    with pytest.raises(UserError, match="differ at run time: 3 vs 5"):
        m.run([np.zeros((3, 4), np.float32), np.zeros((5, 4), np.float32)], device="sim")
