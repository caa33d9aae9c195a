"""The documentation's options reference page is exactly what the config definitions generate."""

from __future__ import annotations

from pathlib import Path

from spark_eos_connect.apps.docs import options_page, options_reference

PAGE = Path(__file__).resolve().parents[3] / "docs" / "options.md"


def test_options_page_is_current() -> None:
    assert PAGE.read_text() == options_page(), "docs/options.md is stale: run `make docs`"


def test_reference_covers_framework_and_shipped_connectors() -> None:
    reference = options_reference()

    for option in ("`transaction.boundary`", "`exactly.once.source.support`", "`batch.size`"):
        assert option in reference
    assert "## `Generator` options" in reference
    assert "### `JsonConverter` options" in reference  # a plugin's options under its section


def test_page_starts_with_its_title_and_says_it_is_generated() -> None:
    page = options_page()

    assert page.startswith("# Options reference\n")
    assert "do not edit" in page.splitlines()[2]
