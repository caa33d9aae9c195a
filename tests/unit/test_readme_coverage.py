"""Every fenced block and shell command of README.md has a test that runs it
(`tests/integration/docs/test_readme_snippets.py`), and every path the README names exists."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
DOCS_TESTS = REPO / "tests" / "integration" / "docs"


def load_readme_helper() -> ModuleType:
    """`tests/integration/docs/readme.py` (pure Python), loaded by path."""
    spec = importlib.util.spec_from_file_location("_readme_snippets", DOCS_TESTS / "readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


readme = load_readme_helper()
TEXT = readme.README.read_text()


def uncovered(markdown: str) -> list[str]:
    return [s.key for s in readme.snippets(markdown) if s.key not in readme.COVERAGE]


def test_every_readme_snippet_has_a_covering_test() -> None:
    assert uncovered(TEXT) == [], (
        "README.md has snippets no test runs: add a test in tests/integration/docs/ and an "
        "entry in COVERAGE (tests/integration/docs/readme.py)"
    )


def test_coverage_names_no_snippet_the_readme_lost() -> None:
    keys = {s.key for s in readme.snippets(TEXT)}
    assert sorted(set(readme.COVERAGE) - keys) == []


def defined_functions(path: Path) -> set[str]:
    module = ast.parse(path.read_text())
    return {node.name for node in module.body if isinstance(node, ast.FunctionDef)}


def test_covering_tests_exist() -> None:
    defined = defined_functions(DOCS_TESTS / "test_readme_snippets.py")
    named = {
        test
        for test in readme.COVERAGE.values()
        if not test.startswith((readme.CI, readme.ELSEWHERE))
    }
    assert named <= defined, sorted(named - defined)
    assert {n for n in defined if n.startswith("test_")} <= named  # none is left unregistered


def test_covering_tests_elsewhere_exist() -> None:
    elsewhere = [
        test.removeprefix(readme.ELSEWHERE).split("::")
        for test in readme.COVERAGE.values()
        if test.startswith(readme.ELSEWHERE)
    ]
    assert elsewhere
    for path, name in elsewhere:
        assert name in defined_functions(REPO / path), f"{path}::{name}"


def test_a_new_block_or_command_would_be_caught() -> None:
    extra = (
        "\n```python\nprint('new')\n```\n"
        "Run `python jobs/new_job.py --fast` or\n`eosconnect restart-all\n--now`.\n"
    )
    assert uncovered(TEXT + extra) == [
        "```python print('new')",
        "python jobs/new_job.py",
        "eosconnect restart-all",
    ]


def test_make_commands_are_targets_and_ci_ones_run_setup_first() -> None:
    targets = readme.make_targets((REPO / "Makefile").read_text())
    named = set(re.findall(r"^make (\w+)", TEXT, re.MULTILINE)) | set(
        re.findall(r"`make (\w+)`", TEXT)
    )
    assert named and named <= set(targets)
    for ci_target in ("demo", "test"):
        assert "setup" in targets[ci_target][0]


def test_shell_lines_split_comments_and_join_continuations() -> None:
    block = "curl -s 'a#b' -X PUT  # 204: done\ncurl -d \\\n  '{\"x\": 1}'  # 200\n"
    assert readme.shell_lines(block) == [
        ("curl -s 'a#b' -X PUT", "204: done"),
        ("curl -d    '{\"x\": 1}'", "200"),
    ]


def test_every_repository_path_the_readme_names_exists() -> None:
    paths = re.findall(r"`((?:tests|spark_eos_connect|jobs|notebooks)/[\w./-]*)`", TEXT)
    assert paths
    assert [p for p in paths if not (REPO / p).exists()] == []
