"""Differential tests against Connect: ValueToKey, ExtractField, HoistField, Flatten."""

from __future__ import annotations

from typing import Any

import pytest

T = "org.apache.kafka.connect.transforms."
SIDES = ["Key", "Value"]


def _config(type_: str, **options: str) -> dict[str, str]:
    config = {"transforms": "x", "transforms.x.type": T + type_}
    config.update({f"transforms.x.{k}": v for k, v in options.items()})
    return config


def _on_side(samples: Any, side: str, value: Any) -> dict[str, Any]:
    if side == "Key":
        return samples.record(samples.string_key(), key=value)
    return samples.record(value, key=samples.string_key())


@pytest.mark.parametrize(
    "fields", ["id", "id,name,address", "name,id", "id,id,name", "missing", "id,none,nested"]
)
def test_value_to_key(differential: Any, samples: Any, fields: str) -> None:
    config = _config("ValueToKey", fields=fields)
    for value in (samples.order(), samples.schemaless(), None, samples.envelope(None, [1])):
        differential.check(config, samples.record(value, key=samples.string_key()))


EXTRACT_OPTIONS = [
    {"field": "id"},
    {"field": "address"},
    {"field": "missing"},
    {"field": "address.city"},
    {"field": "address.city", "field.syntax.version": "V2"},
    {"field": "address.geo.lat", "field.syntax.version": "v2"},
    {"field": "address.nothing.lat", "field.syntax.version": "V2"},
    {"field": "nested.y.z", "field.syntax.version": "V2"},
    {"field": "nested.x.z", "field.syntax.version": "V2"},
    {"field": "`nested`.y", "field.syntax.version": "V2"},
    {"field": "`nested.y", "field.syntax.version": "V2"},
    {"field": "qty", "replace.null.with.default": "false"},
    {"field": "id", "field.syntax.version": "V3"},
]


@pytest.mark.parametrize("options", EXTRACT_OPTIONS)
@pytest.mark.parametrize("side", SIDES)
def test_extract_field(differential: Any, samples: Any, side: str, options: dict[str, str]) -> None:
    config = _config(f"ExtractField${side}", **options)
    dotted = {"a.b": {"c": 1}, "a": {"b": 2}}
    for value in (samples.order(), samples.schemaless(), None, samples.envelope(None, dotted)):
        differential.check(config, _on_side(samples, side, value))
    optional_null = samples.envelope({**samples.ORDER_SCHEMA, "optional": True}, None)
    differential.check(config, _on_side(samples, side, optional_null))


def test_extract_field_backtick_paths(differential: Any, samples: Any) -> None:
    payload = {"a.b": {"c": 1, "d.e": 2}, "a": {"b": {"c": 3}}, "x`y": 4}
    for path in ("`a.b`.c", "a.b.c", "`a.b`.`d.e`", "x`y", "`x\\`y`", "a.", "`a.b`"):
        config = _config("ExtractField$Value", **{"field": path, "field.syntax.version": "V2"})
        differential.check(config, samples.record(samples.envelope(None, payload)))


@pytest.mark.parametrize("side", SIDES)
def test_hoist_field(differential: Any, samples: Any, side: str) -> None:
    config = _config(f"HoistField${side}", field="wrapped")
    int_schema = {"type": "int32", "optional": True}
    for value in (
        samples.order(),
        samples.schemaless(),
        None,
        samples.envelope(int_schema, 5),
        samples.envelope(int_schema, None),
        samples.envelope({"type": "int32", "optional": False}, 5),
        samples.envelope(None, "plain"),
    ):
        differential.check(config, _on_side(samples, side, value))


NESTED_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "optional": False,
    "name": "Outer",
    "fields": [
        {"field": "id", "type": "int32", "optional": False},
        {
            "field": "inner",
            "type": "struct",
            "optional": True,
            "name": "Inner",
            "default": {"a": 10, "deep": {"b": "dflt"}},
            "fields": [
                {"field": "a", "type": "int32", "optional": False},
                {
                    "field": "deep",
                    "type": "struct",
                    "optional": False,
                    "fields": [{"field": "b", "type": "string", "optional": False}],
                },
            ],
        },
        {
            "field": "list",
            "type": "array",
            "optional": False,
            "items": {"type": "int64", "optional": False},
        },
    ],
}


@pytest.mark.parametrize("delimiter", [None, "_", "::"])
@pytest.mark.parametrize("side", SIDES)
def test_flatten(differential: Any, samples: Any, side: str, delimiter: str | None) -> None:
    options = {} if delimiter is None else {"delimiter": delimiter}
    config = _config(f"Flatten${side}", **options)
    for value in (
        samples.order(),
        samples.schemaless(),
        None,
        samples.envelope(
            NESTED_SCHEMA, {"id": 1, "inner": {"a": 2, "deep": {"b": "x"}}, "list": [1]}
        ),
        samples.envelope(NESTED_SCHEMA, {"id": 1, "inner": None, "list": []}),
        samples.envelope(None, {"m": {"k": {"j": None}}, "arr": [{"a": 1}]}),
        samples.envelope(None, 3),
    ):
        differential.check(config, _on_side(samples, side, value))


def test_flatten_refuses_maps_in_structs(differential: Any, samples: Any) -> None:
    schema = {
        "type": "struct",
        "optional": False,
        "fields": [
            {
                "field": "m",
                "type": "map",
                "optional": False,
                "keys": {"type": "string", "optional": False},
                "values": {"type": "int32", "optional": False},
            }
        ],
    }
    differential.check(
        _config("Flatten$Value"), samples.record(samples.envelope(schema, {"m": {"a": 1}}))
    )
