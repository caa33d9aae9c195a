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
    api = (site / "connectors" / "api" / "index.html").read_text()
    for documented in ("SourceTask", "pre_commit", "ConfigDef", "offset_storage_reader"):
        assert documented in api, documented
    assert "Called after offsets up to the last polled records were committed" in api


def test_make_docs_writes_the_options_page_then_builds_strict() -> None:
    makefile = (REPO / "Makefile").read_text()
    recipe = makefile.split("\ndocs: setup", 1)[1].split("\n\n", 1)[0]
    assert "-m spark_eos_connect.apps.docs --write docs/options.md" in recipe
    assert "mkdocs build --strict" in recipe
