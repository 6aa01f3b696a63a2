"""The code generator's mappings and the schedule dialect's `Mapping` enum name the same
mappings: the dialect cannot import codegen, so this test holds them together."""

from __future__ import annotations

from fsir.codegen.mappings import MAPPINGS
from fsir.dialects import schedule


def test_every_mapping_is_an_enum_member_and_back():
    assert {m.value for m in schedule.Mapping} == set(MAPPINGS)


def test_each_mapping_is_registered_under_its_own_name_with_a_params_attribute():
    for key, mapping in MAPPINGS.items():
        assert mapping.name == key and isinstance(mapping.name, schedule.Mapping)
        assert schedule.PARAMS_OF[mapping.name].MAPPING == mapping.name
