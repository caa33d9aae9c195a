"""`runtime.no_ops`: a missing source file, a topic that does not exist, a topics.regex that
matches none are named (issue 40 item 3)."""

from __future__ import annotations

from spark_eos_connect.runtime.no_ops import missing_file_warning, missing_topic_warnings


def test_a_missing_file_of_a_file_source_is_named() -> None:
    warning = missing_file_warning("FileStreamSourceConnector", "/data/ordrs.txt", exists=False)

    assert warning == (
        'WARNING: FileStreamSource\'s file "/data/ordrs.txt" does not exist: nothing is read '
        "until it is created (check the option file)"
    )
    assert missing_file_warning("FileStreamSourceConnector", "/data/o.txt", exists=True) is None
    assert missing_file_warning("GeneratorConnector", "/data/o.txt", exists=False) is None


def test_topics_that_do_not_exist_and_a_regex_matching_none_are_named() -> None:
    existing = {"orders", "__consumer_offsets"}

    warnings = missing_topic_warnings(["orders", "ordres"], "__.*|pay.*", existing)

    assert warnings == [
        'WARNING: topic "ordres" does not exist: nothing is read from it until it is created '
        "(check the option topics)",
        'WARNING: topics.regex "__.*|pay.*" matches no topic: nothing is read until a topic '
        "whose whole name matches is created",
    ]
    assert missing_topic_warnings(["orders"], "ord.*", existing) == []
    assert missing_topic_warnings([], "ord", existing) != []  # the whole name must match
