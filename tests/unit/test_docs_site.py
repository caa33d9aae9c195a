"""`make docs` builds the documentation site with warnings as errors: this test runs the same
build (`mkdocs build --strict`), so CI builds it, and checks that the generated pages render."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_site_builds_strict_with_the_options_and_api_reference(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert result.returncode == 0, result.stderr[-4000:]
    options = (site / "options" / "index.html").read_text()
    assert "transaction.boundary" in options and "Generator" in options
    assert "PostgresCdcSource" in options and "PostgresSink" in options
    for page in ("architecture", "exactly-once-source", "connectors/postgres-cdc-source"):
        assert 'class="mermaid"' in (site / page / "index.html").read_text(), page
    assert (site / "css" / "extra.css").is_file()
    api = (site / "connectors" / "api" / "index.html").read_text()
    for documented in ("SourceTask", "pre_commit", "ConfigDef", "offset_storage_reader"):
        assert documented in api, documented
    assert "Called after offsets up to the last polled records were committed" in api


def test_make_docs_writes_the_options_page_then_builds_strict() -> None:
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\ndocs: setup", 1)[1].split("\n\n", 1)[0]
    assert "-m spark_eos_connect.apps.docs --write docs/options.md" in recipe
    assert "mkdocs build --strict" in recipe


def connector_and_converter_pages() -> list[str]:
    """The pages about one connector or converter (relative to `docs/`)."""
    docs = REPO / "docs"
    pages = [*(docs / "connectors").glob("*.md"), *(docs / "converters").glob("*.md")]
    return sorted(str(page.relative_to(docs)) for page in pages)


def test_home_page_and_readme_link_every_connector_and_converter_page() -> None:
    pages = connector_and_converter_pages()
    assert "connectors/postgres-sink.md" in pages and "converters/schema-registry.md" in pages
    home = (REPO / "docs" / "index.md").read_text()
    readme = (REPO / "README.md").read_text()
    for page in [*pages, "converters-and-transforms.md", "sinks-and-delta.md"]:
        assert f"]({page})" in home, f"docs/index.md does not link {page}"
        assert f"](docs/{page})" in readme, f"README.md does not link docs/{page}"


def test_options_reference_covers_every_shipped_connector_and_converter() -> None:
    from spark_eos_connect.apps.docs import connector_config_defs, options_page
    from spark_eos_connect.converters import CONVERTERS
    from spark_eos_connect.plugins.connectors import known_connectors

    page = options_page()
    assert {name for name, _ in connector_config_defs()} == set(known_connectors())
    for connector in known_connectors():
        assert f"## `{connector}` options" in page, connector
    for converter in CONVERTERS:
        assert f"| `{converter}` |" in page, converter
    assert page == (REPO / "docs" / "options.md").read_text(), "run `make docs`"


def test_option_names_do_not_break_and_code_lines_scroll() -> None:
    """The site's extra CSS keeps table code on one line and lets code blocks scroll; Mermaid
    fences render as diagrams."""
    config = (REPO / "mkdocs.yml").read_text()
    assert "extra_css:\n  - css/extra.css" in config
    assert "name: mermaid" in config
    css = (REPO / "docs" / "css" / "extra.css").read_text()
    assert "table:not([class]) code" in css and "white-space: nowrap" in css
    assert "overflow-x: auto" in css
