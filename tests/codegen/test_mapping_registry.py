"""A mapping's identity is its parameters attribute: the code generator's registry is
keyed by it, and the names derive from it."""

from __future__ import annotations

from pathlib import Path

from fsir.codegen.mappings import MAPPINGS, mapping_of
from fsir.dialects import schedule
from fsir.pipeline import PipelineOptions, load, lower

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_registry_is_keyed_by_each_mappings_parameters_attribute():
    assert set(MAPPINGS) == set(schedule.MAPPING_PARAMS)
    for params, mapping in MAPPINGS.items():
        assert mapping.PARAMS is params and mapping.name == params.MAPPING
        assert schedule.PARAMS_OF[mapping.name] is params


def test_a_kernel_finds_its_mapping_by_the_class_of_its_parameters():
    module = lower(load(str(EXAMPLES / "softmax.mlir")), PipelineOptions(), until="stitch-codegen")
    kernels = [k for k in module.walk() if isinstance(k, schedule.KernelOp)]
    assert kernels
    for k in kernels:
        assert mapping_of(k) is MAPPINGS[type(k.params)] and mapping_of(k).name == k.params.MAPPING
