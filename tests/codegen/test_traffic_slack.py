"""stitch-codegen's `traffic_slack`: a GEMM kernel may be up to that fraction slower than
its fastest configuration when it requests fewer global bytes (`Mapping.leaner`,
`gemm.split_wins`). The kernels' costs state the bytes the chosen configuration requests
(`requested_bytes`, the summary's count, which the simulator's matches:
tests/codegen/test_gemm_cost.py, test_split_k_cost.py)."""

from __future__ import annotations

import pytest

from fsir.codegen.mappings.gemm import SPLIT_MARGIN
from fsir.dialects.schedule import KernelOp
from fsir.pipeline import PipelineOptions, lower, read_model
from fsir.testing.paths import EXAMPLES


def kernels(slack: float, path=EXAMPLES / "bert_layer.mlir") -> list[KernelOp]:
    options = PipelineOptions(gpu="A100", precision="tf32", traffic_slack=slack)
    module = lower(read_model(path), options, until="stitch-codegen")
    return [k for k in module.walk() if isinstance(k, KernelOp)]


def figure(k: KernelOp, name: str) -> float:
    assert k.cost is not None
    return k.cost.data[name].value.data  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def bert() -> dict[float, list[KernelOp]]:
    return {slack: kernels(slack) for slack in (0.0, 0.3)}


def test_the_slack_trades_gemm_time_for_requested_bytes(bert):
    """The BERT layer (B=2 S=128 H=768, tf32, A100): the fastest GEMM tiles request 4.2x
    the distinct bytes (loads and stores); with a 30% slack 3.4x, every GEMM at most
    30% slower (a split one's margin counted) and the layer's estimate at most 10%."""
    fast, lean = bert[0.0], bert[0.3]
    assert [k.mapping.data for k in fast] == [k.mapping.data for k in lean]
    distinct = sum(figure(k, "global_bytes") for k in fast)
    assert distinct == sum(figure(k, "global_bytes") for k in lean)
    requested = {s: sum(figure(k, "requested_bytes") for k in ks) for s, ks in bert.items()}
    assert requested[0.3] < 0.85 * requested[0.0]
    assert requested[0.3] <= 3.5 * distinct < requested[0.0]
    for f, w in zip(fast, lean):
        if f.mapping.data == "gemm":
            assert figure(w, "requested_bytes") <= figure(f, "requested_bytes")
            assert figure(w, "estimate_us") <= 1.3 * figure(f, "estimate_us") / (1 - SPLIT_MARGIN)
        else:
            assert w.cost is not None and f.cost is not None
            assert w.cost.data["config"] == f.cost.data["config"]
    total = {s: sum(figure(k, "estimate_us") for k in ks) for s, ks in bert.items()}
    assert total[0.0] <= total[0.3] <= 1.1 * total[0.0]


def test_the_slack_must_be_a_fraction():
    from fsir.errors import UserError

    with pytest.raises(UserError, match="traffic_slack=1.5"):
        kernels(1.5, EXAMPLES / "gelu.mlir")
