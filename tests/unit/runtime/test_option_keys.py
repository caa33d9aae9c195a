"""`runtime.config.option_keys`: option names lower-cased in one place only."""

from __future__ import annotations

import re

from spark_eos_connect.runtime.config.option_keys import lowered

from .package_scan import PACKAGE, lines_outside

OWNER = PACKAGE / "runtime" / "config" / "option_keys.py"
KEY_LOWERING = re.compile(
    r"\{[^{}]*\.lower\(\)\s*:[^{}]*\.items\(\)"  # {str(k).lower(): v for k, v in m.items()}
    r"|\.lower\(\) for \w+ in \w+\s*\}"  # {str(k).lower() for k in m}
    r"|\(str\(\w+\)\.lower\(\), "  # ((str(k).lower(), v) for k, v in m.items())
)


def test_names_are_lower_cased_and_values_kept() -> None:
    assert lowered({"maxRecordsPerTrigger": 10, "Kafka.Bootstrap.Servers": "b:1"}) == {
        "maxrecordspertrigger": 10,
        "kafka.bootstrap.servers": "b:1",
    }


def test_the_pattern_finds_each_way_of_lowering_a_maps_keys() -> None:
    for line in (
        "rest = {str(k).lower(): v for k, v in options.items()}",
        "keys = {str(k).lower() for k in options}",
        "given = {k: v for k, v in ((str(k).lower(), v) for k, v in options.items())}",
        "props = {key.lower(): value for key, value in props.items()}",
    ):
        assert KEY_LOWERING.search(line), line


def test_no_other_module_lower_cases_option_names() -> None:
    offenders = lines_outside(OWNER, KEY_LOWERING)

    assert offenders == [], "lower-case option names with option_keys.lowered"
    assert KEY_LOWERING.search(OWNER.read_text())  # the pattern still sees the one that does
