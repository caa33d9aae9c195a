"""The ACL table of `docs/security.md` is exactly what the security tests grant
(`tests/integration/security/acl_table.py`, proven path by path and row by row by `test_acls.py`
there), "needed by" column included."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
ACL_TABLE = REPO / "tests" / "integration" / "security" / "acl_table.py"


def load_acl_table() -> ModuleType:
    """The pure-Python ACL table module, loaded by path."""
    spec = importlib.util.spec_from_file_location("_acl_table", ACL_TABLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


acl_table = load_acl_table()
README = REPO / "docs" / "security.md"
"""The page holding the ACL table."""


def test_the_readme_table_is_the_granted_table_row_for_row() -> None:
    granted = [row.markdown() for row in acl_table.ACL_ROWS]

    assert acl_table.readme_rows(README.read_text()) == granted


def test_every_row_is_needed_by_some_path_and_every_path_needs_rows() -> None:
    for row in acl_table.ACL_ROWS:
        assert row.needed_by, row.key
        assert set(row.needed_by) <= set(acl_table.PATHS), row.key
        assert list(row.needed_by) == [p for p in acl_table.PATHS if p in row.needed_by]
    for path in acl_table.PATHS:
        assert acl_table.rows_for(path), path
    assert len({row.key for row in acl_table.ACL_ROWS}) == len(acl_table.ACL_ROWS)


def test_no_row_grants_idempotent_write_on_the_cluster() -> None:
    """Kafka 3.0 and later need no IdempotentWrite (KIP-679): every path runs without it."""
    assert not [row for row in acl_table.ACL_ROWS if "IdempotentWrite" in row.operations]


def test_the_table_parser_reads_only_the_acl_table() -> None:
    markdown = (
        "### Other\n\n| a | b | c | d |\n| --- | --- | --- | --- |\n| x | y | z | w |\n\n"
        "### ACLs\n\n| operation | resource | name | needed by |\n| --- | --- | --- | --- |\n"
        "| Read | Group | `connect-<name>` | sink |\n\n| later | table | here | too |\n"
    )

    assert acl_table.readme_rows(markdown) == [("Read", "Group", "`connect-<name>`", "sink")]


def test_a_grant_shared_by_two_rows_stays_when_one_row_is_left_out() -> None:
    pipeline = acl_table.Pipeline("g", ("c",), ("data",), ("cfg", "off", "st"))
    write_row = next(
        r
        for r in acl_table.ACL_ROWS
        if r.operations == ("Write", "Describe") and r.resource == "Topic"
    )

    left = acl_table.grants_without(pipeline, write_row)

    assert acl_table.Grant("Describe", "Topic", "cfg") in left  # the Read row grants it too
    assert acl_table.Grant("Write", "Topic", "cfg") not in left
    assert acl_table.Grant("Describe", "Topic", "data") not in left
    assert acl_table.Grant("Write", "TransactionalId", "g-c-", True) in left
