"""The README's options reference is exactly what the config definitions generate."""

from __future__ import annotations

from pathlib import Path

from spark_eos_connect.apps.docs import current_block, options_reference

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_options_reference_is_current() -> None:
    assert current_block(README.read_text()) == options_reference(), (
        "README.md's options reference is stale: run `make docs`"
    )


def test_reference_covers_framework_and_shipped_connectors() -> None:
    reference = options_reference()

    for option in ("`transaction.boundary`", "`exactly.once.source.support`", "`batch.size`"):
        assert option in reference
    assert "### `Generator` options" in reference
