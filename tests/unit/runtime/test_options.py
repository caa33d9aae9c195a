"""`runtime.config.options`: a data source's options read once, names lower-cased, Kafka
settings apart, providers read (or why not), aliases spelt as declared, and the value shipped
to Spark's workers intact."""

from __future__ import annotations

import pickle
import re

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.runtime.config.options import DataSourceOptions

from .package_scan import PACKAGE, lines_outside

GIVEN = {
    "Name": "files",
    "Kafka.Bootstrap.Servers": "b:1",
    "kafka.sasl.password": "${env:PASSWORD}",
    "config.providers": "env",
    "transforms": "Route",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
}


def test_names_are_lower_cased_and_kafka_settings_set_apart() -> None:
    read = DataSourceOptions.read(GIVEN)

    assert read.get("name") == "files" and read.get("kafka.bootstrap.servers") == "b:1"
    assert read.kafka == {"bootstrap.servers": "b:1", "sasl.password": "${env:PASSWORD}"}
    assert read.props == {
        "name": "files",
        "transforms": "Route",
        "transforms.Route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    }
    assert [spec.name for spec in read.checked_providers().specs] == ["env"]


def test_reading_read_options_returns_them() -> None:
    read = DataSourceOptions.read(GIVEN)

    assert DataSourceOptions.read(read) is read


def test_wrong_providers_are_kept_for_whoever_needs_them() -> None:
    read = DataSourceOptions.read({"config.providers": "env", "config.providers.vault.class": "x"})

    assert read.providers.specs == ()
    assert read.providers_error is not None and "vault" in str(read.providers_error)
    with pytest.raises(ConfigError, match="does not enable"):
        read.checked_providers()


def test_read_options_travel_to_spark_workers_intact() -> None:
    read = DataSourceOptions.read(GIVEN)

    assert pickle.loads(pickle.dumps(read)) == read


def test_read_options_go_wherever_a_raw_option_map_went() -> None:
    read = DataSourceOptions.read(GIVEN)

    assert dict(read) == read.given and len(read) == len(GIVEN)
    assert read["transforms.route.type"].endswith("RegexRouter")
    assert DataSourceOptions.read(dict(read)) == read


OWNER = PACKAGE / "runtime" / "config" / "options.py"
KAFKA_SPLIT = re.compile(r"""startswith\((KAFKA_PREFIX|["']kafka\.["'])\)|split_options\(""")


def test_no_other_module_sets_the_kafka_settings_apart() -> None:
    offenders = lines_outside(OWNER, KAFKA_SPLIT)

    assert offenders == [], "read options with DataSourceOptions.read"
    assert KAFKA_SPLIT.search(OWNER.read_text())  # the pattern still sees the one that does
