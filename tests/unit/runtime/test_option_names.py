"""`runtime.option_names`: an unknown option is named, quoted, with the known name it is most
likely a typo of."""

from __future__ import annotations

from spark_eos_connect.runtime.option_names import (
    closest,
    did_you_mean,
    unknown_option_message,
)

KNOWN = ["file", "topic", "batch.size", "tasks.max", "name", "connector.class"]


def test_a_typo_gets_the_closest_known_name() -> None:
    assert closest("fiel", KNOWN) == "file"
    assert closest("batch.sise", KNOWN) == "batch.size"
    assert closest("Topic", KNOWN) == "topic"


def test_a_name_like_nothing_known_gets_no_suggestion() -> None:
    assert closest("zzzzzz", KNOWN) is None
    assert did_you_mean("zzzzzz", KNOWN) == ""


def test_the_message_quotes_the_option_and_the_suggestion() -> None:
    message = unknown_option_message("fiel", "FileStreamSource", KNOWN)

    assert message == (
        'Unknown option "fiel": defined neither by the framework nor by FileStreamSource '
        '(did you mean "file"?)'
    )
