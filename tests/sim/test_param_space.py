"""The simulator refuses kernels whose parameters overflow the target's parameter space
(ptxas refuses them too), at the kernel's `.entry`."""

from __future__ import annotations

import numpy as np
import pytest

from fsir.errors import SimulatorError
from fsir.sim import run_ptx
from fsir.sim.params import PARAM_LIMIT, PARAM_LIMIT_LARGE, param_limit


def _ptx(n: int, version: str = "8.7", target: str = "sm_80") -> str:
    params = ",\n".join(f"\t.param .u64 k_p{i}" for i in range(n))
    return (f".version {version}\n.target {target}\n.address_size 64\n\n"
            f".visible .entry k(\n{params}\n)\n{{\n\t.reg .b64 %rd<2>;\n"
            "\tld.param.u64 %rd1, [k_p0];\n\tret;\n}\n")


def test_param_limits():
    assert param_limit("8.7", ["sm_80"]) == PARAM_LIMIT_LARGE
    assert param_limit("8.0", ["sm_80"]) == PARAM_LIMIT
    assert param_limit("8.7", ["sm_61"]) == PARAM_LIMIT


def test_large_param_space_on_sm80():
    n = PARAM_LIMIT_LARGE // 8  # 32760 bytes: within the limit of PTX 8.1+ on sm_70+
    run_ptx(_ptx(n), "k", (1,), (1,), [np.zeros(1)] + [0] * (n - 1))


@pytest.mark.parametrize("version,target,n", [("8.7", "sm_80", PARAM_LIMIT_LARGE // 8 + 1),
                                              ("8.0", "sm_80", PARAM_LIMIT // 8 + 1),
                                              ("8.7", "sm_61", PARAM_LIMIT // 8 + 1)])
def test_param_space_overflow_is_refused(version, target, n):
    with pytest.raises(SimulatorError, match=r"kernel 'k', PTX line 5: its parameters take \d+ bytes") as e:
        run_ptx(_ptx(n, version, target), "k", (1,), (1,), [np.zeros(1)] + [0] * (n - 1))
    assert e.value.loc is not None and e.value.loc.line == 5
