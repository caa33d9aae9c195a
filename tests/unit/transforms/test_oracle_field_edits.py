"""Differential tests against Connect: InsertField, ReplaceField, MaskField (key and value)."""

from __future__ import annotations

from typing import Any

import pytest

T = "org.apache.kafka.connect.transforms."
SIDES = ["Key", "Value"]


def _config(type_: str, **options: str) -> dict[str, str]:
    config = {"transforms": "x", "transforms.x.type": T + type_}
    config.update({f"transforms.x.{k}": v for k, v in options.items()})
    return config


def _records(samples: Any, side: str, value: Any, **extra: Any) -> list[dict[str, Any]]:
    """The value on the operated side, a string on the other; source and sink variants."""
    other = samples.string_key()
    make = samples.record
    if side == "Key":
        return [make(other, key=value, **extra), make(other, key=value, offset=17, **extra)]
    return [make(value, key=other, **extra), make(value, key=other, offset=17, **extra)]


INSERT_OPTIONS = [
    {"topic.field": "t"},
    {"topic.field": "t!", "partition.field": "p!", "timestamp.field": "ts!"},
    {"partition.field": "p?", "timestamp.field": "ts", "static.field": "s", "static.value": "v"},
    {"offset.field": "o"},
    {"static.field": "s!", "static.value": "  spaced  "},
    {"topic.field": "name"},
    {"static.field": "s"},
    {},
]


@pytest.mark.parametrize("options", INSERT_OPTIONS)
@pytest.mark.parametrize("side", SIDES)
def test_insert_field(differential: Any, samples: Any, side: str, options: dict[str, str]) -> None:
    config = _config(f"InsertField${side}", **options)
    for value in (samples.order(), samples.schemaless(), None, samples.envelope(None, 5)):
        for record in _records(samples, side, value):
            differential.check(config, record)
        differential.check(
            config, _records(samples, side, value, partition=None, timestamp=None)[0]
        )


REPLACE_OPTIONS = [
    {"include": "id,name,price,nested,none"},
    {"exclude": "tags,address,nested"},
    {"include": "id,name,qty", "exclude": "name"},
    {"renames": "id:order_id,name:label,qty:quantity,ok:okay"},
    {"include": "id,price", "renames": "price:cost,ok:okay"},
    {"renames": "name:id"},
    {"renames": "broken"},
    {"include": "a,a"},
    {"whitelist": "id"},
    {},
]


@pytest.mark.parametrize("options", REPLACE_OPTIONS)
@pytest.mark.parametrize("side", SIDES)
def test_replace_field(differential: Any, samples: Any, side: str, options: dict[str, str]) -> None:
    config = _config(f"ReplaceField${side}", **options)
    for value in (samples.order(), samples.schemaless(), None, samples.envelope(None, "text")):
        for record in _records(samples, side, value):
            differential.check(config, record)


MASK_OPTIONS = [
    {"fields": "id,name,price,ok,tags,nested,none,missing"},
    {"fields": "id,name,qty,small,price,ratio,ok,tags,created,day,when,epoch"},
    {"fields": "id,price,count,small,ratio,epoch,qty", "replacement": "12"},
    {"fields": "big,small", "replacement": "300"},
    {"fields": "price,frac,ratio,id", "replacement": "-2.75"},
    {"fields": "name,when", "replacement": "***"},
    {"fields": "amount", "replacement": "1.25"},
    {"fields": "id", "replacement": "not-a-number"},
    {"fields": "ok", "replacement": "1"},
    {"fields": "raw"},
    {"fields": "address"},
    {"fields": "amount"},
    {"fields": "x", "replacement": ""},
    {"fields": ""},
]


@pytest.mark.parametrize("options", MASK_OPTIONS)
@pytest.mark.parametrize("side", SIDES)
def test_mask_field(differential: Any, samples: Any, side: str, options: dict[str, str]) -> None:
    config = _config(f"MaskField${side}", **options)
    for value in (samples.order(), samples.schemaless(), None):
        differential.check(config, _records(samples, side, value)[0])


def test_schemaless_key_order_follows_java_hashmap(differential: Any, samples: Any) -> None:
    """Many keys, so the copied HashMap resizes: the JSON key order must still match."""
    payload = {f"field_{i:02d}": i for i in range(40)}
    payload.update({"Aa": 1, "BB": 2, "zz": None})  # "Aa" and "BB" share a hash code
    for type_, options in (
        ("InsertField$Value", {"topic.field": "topic", "static.field": "s", "static.value": "v"}),
        ("ReplaceField$Value", {"renames": "field_03:renamed,Aa:aa"}),
        ("MaskField$Value", {"fields": "field_05,new_one,another"}),
    ):
        differential.check(
            _config(type_, **options), samples.record(samples.envelope(None, payload))
        )
