"""Java `.properties` parsing as `java.util.Properties.load` does it."""

from __future__ import annotations

import pytest

from spark_eos_connect.errors import ConfigError
from spark_eos_connect.protocol.java_properties import parse_properties


def test_separators_equals_colon_and_blank() -> None:
    text = "a=1\nb: 2\nc 3\nd = 4\ne\t:\t5\nf\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": ""}


def test_comments_blank_lines_and_line_breaks() -> None:
    text = "# comment=1\n  ! also = comment\n\n   \r\nkey=value\r\nother=x\rlast=y"
    assert parse_properties(text) == {"key": "value", "other": "x", "last": "y"}


def test_value_keeps_trailing_blanks_and_inner_separators() -> None:
    expected = {"url": "jdbc:pg://h:5432/db?a=b  "}
    assert parse_properties("url=jdbc:pg://h:5432/db?a=b  \n") == expected


def test_continuation_lines_join_without_leading_blanks() -> None:
    text = 'jaas=org.Module required \\\n    username="u" \\\n    password="p";\nnext=1\n'
    assert parse_properties(text) == {
        "jaas": 'org.Module required username="u" password="p";',
        "next": "1",
    }


def test_even_backslashes_do_not_continue_and_comments_do_not_continue() -> None:
    text = "a=x\\\\\nb=y\n# c=\\\nd=z\n"
    assert parse_properties(text) == {"a": "x\\", "b": "y", "d": "z"}


def test_continued_line_starting_with_hash_is_value() -> None:
    assert parse_properties("a=1\\\n#2\n") == {"a": "1#2"}


def test_escapes_in_keys_and_values() -> None:
    text = "my\\ key\\=x=tab\\there\\nnew \\u00e9\\\\ \\q\n"
    assert parse_properties(text) == {"my key=x": "tab\there\nnew é\\ q"}


def test_trailing_backslash_at_end_of_text_is_dropped() -> None:
    assert parse_properties("a=1\\") == {"a": "1"}


def test_last_duplicate_wins_and_unicode_text() -> None:
    assert parse_properties("k=1\nk=2\nü=ß\n") == {"k": "2", "ü": "ß"}


def test_malformed_unicode_escape_names_the_line_not_the_content() -> None:
    with pytest.raises(ConfigError, match=r"Malformed \\uxxxx encoding in s.properties line 2"):
        parse_properties("a=1\nsecret=hunter2\\u12\n", "s.properties")
