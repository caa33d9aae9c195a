"""Kafka Connect's offsets-topic record format and the offsets replay."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import EosConnectError
from spark_eos_connect.protocol.offsets_format import (
    OffsetFormatError,
    OffsetsSnapshot,
    Primitive,
    decode_offset_key,
    decode_offset_value,
    encode_offset_key,
    encode_offset_value,
    partition_key,
    validate_offset_map,
)

# --- encoding: golden bytes -------------------------------------------------------------------


def test_file_stream_source_key_and_value() -> None:
    # FileStreamSource's shapes: partition {"filename": ...}, offset {"position": ...}.
    key = encode_offset_key("local-file-source", {"filename": "/tmp/test.txt"})
    assert key == b'["local-file-source",{"filename":"/tmp/test.txt"}]'
    assert encode_offset_value({"position": 123}) == b'{"position":123}'


def test_partition_keys_use_hashmap_order() -> None:
    # 'p' = 112 -> bucket 0, 'a' = 97 -> bucket 1, 'z' = 122 -> bucket 10 (16-slot HashMap).
    expected = b'["c",{"p":3,"a":2,"z":1}]'
    assert encode_offset_key("c", {"z": 1, "a": 2, "p": 3}) == expected
    assert encode_offset_key("c", {"a": 2, "p": 3, "z": 1}) == expected


def test_offset_values_use_hashmap_order() -> None:
    assert encode_offset_value({"z": 1, "p": "x"}) == b'{"p":"x","z":1}'


def test_compact_json_of_all_primitive_types() -> None:
    value = encode_offset_value({"s": "x", "i": -5, "f": 0.5, "t": True, "n": None})
    assert value is not None
    # s=115->3, i=105->9, f=102->6, t=116->4, n=110->14
    assert value == b'{"s":"x","t":true,"f":0.5,"i":-5,"n":null}'


def test_tombstone_value() -> None:
    assert encode_offset_value(None) is None


def test_bmp_text_is_written_as_raw_utf8() -> None:
    key = encode_offset_key("c\u00e9", {"f": "\u00e9\u20ac\u2028\ufeff"})
    assert key == '["c\u00e9",{"f":"\u00e9\u20ac\u2028\ufeff"}]'.encode()
    assert b"\\u" not in key


def test_supplementary_characters_are_escaped_surrogate_pairs() -> None:
    # Jackson's UTF-8 generator (used by JsonConverter) writes a character beyond the BMP as its
    # two UTF-16 surrogates, escaped: U+1F600 is D83D DE00.
    key = encode_offset_key("c", {"f": "a\U0001f600b"})
    assert key == b'["c",{"f":"a\\uD83D\\uDE00b"}]'
    assert decode_offset_key(key) == ("c", {"f": "a\U0001f600b"})


def test_escapes_follow_jackson() -> None:
    value = encode_offset_value({"s": 'q"b\\n\n\t\r\b\f\x01\x1f/\x7f'})
    # Short escapes for quote, backslash, \n \t \r \b \f; other controls as upper-case \u00XX;
    # slash and DEL are written as they are.
    assert value == b'{"s":"q\\"b\\\\n\\n\\t\\r\\b\\f\\u0001\\u001F/\x7f"}'


def test_doubles_are_written_like_java() -> None:
    cases = {
        1.0: b"1.0",
        100.0: b"100.0",
        0.001: b"0.001",
        0.0001: b"1.0E-4",
        1234567.0: b"1234567.0",
        1e7: b"1.0E7",
        -2.5e-5: b"-2.5E-5",
        1.5e300: b"1.5E300",
        -0.0: b"-0.0",
        5e-324: b"4.9E-324",
    }
    for number, text in cases.items():
        assert encode_offset_value({"x": number}) == b'{"x":' + text + b"}"


def test_large_integers_within_long_range() -> None:
    assert encode_offset_value({"x": 2**63 - 1}) == b'{"x":9223372036854775807}'
    assert encode_offset_value({"x": -(2**63)}) == b'{"x":-9223372036854775808}'


# --- validation ------------------------------------------------------------------------------


def test_validate_accepts_primitives() -> None:
    validate_offset_map({"a": "s", "b": 1, "c": 1.5, "d": False, "e": None}, "source offset")
    validate_offset_map({}, "source partition")


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ({1: "x"}, "keys must be strings"),
        ({"k": [1]}, "'k'"),
        ({"k": {"n": 1}}, "'k'"),
        ({"k": b"raw"}, "'k'"),
        ({"k": 2**63}, "64-bit"),
        ({"k": float("nan")}, "non-finite"),
        ({"k": float("inf")}, "non-finite"),
    ],
)
def test_validate_names_bad_key_or_value(bad: dict, fragment: str) -> None:
    with pytest.raises(OffsetFormatError, match="source offset") as info:
        validate_offset_map(bad, "source offset")
    assert fragment in str(info.value)


def test_validate_rejects_non_mapping() -> None:
    with pytest.raises(OffsetFormatError, match="source partition must be a map"):
        validate_offset_map(["a"], "source partition")


def test_error_is_an_eos_connect_error() -> None:
    assert issubclass(OffsetFormatError, EosConnectError)
    assert issubclass(OffsetFormatError, ValueError)


def test_encode_rejects_bad_input() -> None:
    with pytest.raises(OffsetFormatError, match="source partition"):
        encode_offset_key("c", {"k": [1]})  # type: ignore[dict-item]
    with pytest.raises(OffsetFormatError, match="source offset"):
        encode_offset_value({"k": object()})  # type: ignore[dict-item]
    with pytest.raises(OffsetFormatError, match="connector name"):
        encode_offset_key(1, {})  # type: ignore[arg-type]
    with pytest.raises(OffsetFormatError, match="surrogate"):
        encode_offset_key("c", {"k": "\ud800"})


# --- decoding --------------------------------------------------------------------------------


def test_decode_round_trip() -> None:
    partition: dict[str, Primitive] = {"z": 1, "a": "x", "p": None, "f": 2.5, "t": True}
    connector, decoded = decode_offset_key(encode_offset_key("my-conn", partition))
    assert connector == "my-conn"
    assert decoded == partition
    raw = encode_offset_value({"position": 7})
    assert decode_offset_value(raw) == {"position": 7}


def test_decode_key_accepts_whitespace_and_any_order() -> None:
    assert decode_offset_key(b' [ "c" , { "b" : 1 , "a" : 2 } ] ') == ("c", {"a": 2, "b": 1})


def test_decode_key_with_null_partition() -> None:
    assert decode_offset_key(b'["c",null]') == ("c", None)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b'{"c":{}}', "JSON array"),
        (b'["c"]', "2 elements"),
        (b'["c",{},{}]', "2 elements"),
        (b"[1,{}]", "connector name"),
        (b"[null,{}]", "connector name"),
        (b'["c",[1]]', "object or null"),
        (b'["c","p"]', "object or null"),
        (b'["c",{"a":[1]}]', "'a'"),
        (b"not json", "not JSON"),
        (b"", "not JSON"),
        (b'["c",{"a":NaN}]', "not JSON"),
        (b'["c",{"a":1e999}]', "not JSON"),
        (b'["\xff",{}]', "UTF-8"),
    ],
)
def test_decode_key_rejects_malformed(raw: bytes, fragment: str) -> None:
    with pytest.raises(OffsetFormatError) as info:
        decode_offset_key(raw)
    assert fragment in str(info.value)


def test_decode_value() -> None:
    assert decode_offset_value(None) is None
    assert decode_offset_value(b"null") is None
    assert decode_offset_value(b'{"position":1.0E10}') == {"position": 1e10}
    with pytest.raises(OffsetFormatError, match="JSON object"):
        decode_offset_value(b"[1]")
    with pytest.raises(OffsetFormatError, match="'p'"):
        decode_offset_value(b'{"p":{"q":1}}')


# --- partition_key ---------------------------------------------------------------------------


def test_partition_key_is_canonical() -> None:
    assert partition_key({"b": 1, "a": "x"}) == partition_key({"a": "x", "b": 1})
    assert partition_key({"b": 1, "a": "x"}) == '{"a":"x","b":1}'


def test_partition_key_distinguishes_value_types() -> None:
    keys = {partition_key({"a": 1}), partition_key({"a": 1.0}), partition_key({"a": True})}
    assert len(keys) == 3


# --- OffsetsSnapshot -------------------------------------------------------------------------


def _record(connector: str, partition: dict, offset: dict | None) -> tuple[bytes, bytes | None]:
    return encode_offset_key(connector, partition), encode_offset_value(offset)


def test_snapshot_latest_offset_wins() -> None:
    snap = OffsetsSnapshot()
    snap.apply(*_record("c", {"filename": "a"}, {"position": 1}))
    snap.apply(*_record("c", {"filename": "b"}, {"position": 5}))
    snap.apply(*_record("c", {"filename": "a"}, {"position": 2}))
    snap.apply(*_record("other", {"filename": "a"}, {"position": 9}))
    assert snap.offset("c", {"filename": "a"}) == {"position": 2}
    assert snap.offset("c", {"filename": "b"}) == {"position": 5}
    assert snap.offset("other", {"filename": "a"}) == {"position": 9}
    assert snap.offset("c", {"filename": "zzz"}) is None
    assert snap.offset("missing", {"filename": "a"}) is None
    assert snap.connectors() == ["c", "other"]
    assert snap.offsets_for("c") == {
        '{"filename":"a"}': ({"filename": "a"}, {"position": 2}),
        '{"filename":"b"}': ({"filename": "b"}, {"position": 5}),
    }
    assert snap.applied == 4
    assert snap.skipped == 0


def test_snapshot_tombstone_removes_partition() -> None:
    snap = OffsetsSnapshot()
    snap.apply(*_record("c", {"filename": "a"}, {"position": 1}))
    snap.apply(encode_offset_key("c", {"filename": "a"}), None)
    assert snap.offset("c", {"filename": "a"}) is None
    assert snap.offsets_for("c") == {}
    assert snap.connectors() == []
    assert snap.raw_value(encode_offset_key("c", {"filename": "a"})) is None


def test_snapshot_skips_and_counts_malformed_keys() -> None:
    snap = OffsetsSnapshot()
    snap.apply(b"garbage", b'{"position":1}')
    snap.apply(b'["c"]', b'{"position":1}')
    snap.apply(b'[1,{"filename":"a"}]', b'{"position":1}')
    snap.apply(b'["c",null]', b'{"position":1}')
    snap.apply(None, b'{"position":1}')
    snap.apply(*_record("c", {"filename": "a"}, {"position": 3}))
    assert snap.skipped == 5
    assert snap.applied == 1
    assert snap.offset("c", {"filename": "a"}) == {"position": 3}


def test_snapshot_malformed_value_drops_the_offset() -> None:
    snap = OffsetsSnapshot()
    key, value = _record("c", {"filename": "a"}, {"position": 3})
    snap.apply(key, value)
    snap.apply(key, b"[not an object]")
    assert snap.skipped == 1
    assert snap.offset("c", {"filename": "a"}) is None
    assert snap.raw_value(key) == b"[not an object]"


def test_snapshot_logical_view_ignores_key_order_raw_view_does_not() -> None:
    snap = OffsetsSnapshot()
    hashmap_ordered = b'["c",{"p":1,"a":2}]'  # what encode_offset_key writes
    other_order = b'["c",{"a":2,"p":1}]'  # e.g. a connector using a LinkedHashMap
    snap.apply(hashmap_ordered, b'{"o":1}')
    snap.apply(other_order, b'{"o":2}')
    assert snap.offset("c", {"a": 2, "p": 1}) == {"o": 2}
    assert snap.raw_value(hashmap_ordered) == b'{"o":1}'
    assert snap.raw_value(other_order) == b'{"o":2}'
    assert encode_offset_key("c", {"a": 2, "p": 1}) == hashmap_ordered
    # A tombstone under either encoding removes the logical partition.
    snap.apply(hashmap_ordered, None)
    assert snap.offset("c", {"p": 1, "a": 2}) is None
    assert snap.raw_value(other_order) == b'{"o":2}'


def test_snapshot_results_are_copies() -> None:
    snap = OffsetsSnapshot()
    snap.apply(*_record("c", {"filename": "a"}, {"position": 1}))
    got = snap.offset("c", {"filename": "a"})
    assert got is not None
    got["position"] = 99
    partition, offset = snap.offsets_for("c")['{"filename":"a"}']
    partition["filename"] = "changed"
    offset["position"] = 100
    assert snap.offset("c", {"filename": "a"}) == {"position": 1}


def test_quote_escapes_each_character_as_one_at_a_time_would() -> None:
    import random

    from spark_eos_connect.protocol._json import _escape_char, quote

    alphabet = [chr(c) for c in range(0x80)] + ["é", "\u2028", "\uffff", "\U0001f600", "\U0010ffff"]
    pick = random.Random(7)
    for _ in range(500):
        text = "".join(pick.choice(alphabet) for _ in range(pick.randrange(12)))
        assert quote(text) == '"' + "".join(_escape_char(ch) for ch in text) + '"'
    assert quote("plain text") == '"plain text"'
    with pytest.raises(ValueError, match="lone surrogate"):
        quote("a\ud800b")
