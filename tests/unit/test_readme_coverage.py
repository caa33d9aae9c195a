"""Every fenced block and shell command of README.md and of the pages in `docs/` has a test that
runs it (`tests/integration/docs/test_readme_snippets.py`, a `COVERAGE` entry naming a test
elsewhere, or a page's `<!-- covered by: tests/...::test_name -->` comment), and every path the
pages name exists."""

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
PAGES = {str(path.relative_to(REPO)): path.read_text() for path in readme.pages()}
EVERY_TEXT = "\n".join(PAGES.values())


def uncovered(markdown: str) -> list[str]:
    return [s.key for s in readme.snippets(markdown) if readme.covering_test(s) is None]


def test_the_docs_pages_are_read_too() -> None:
    assert "README.md" in PAGES and "docs/index.md" in PAGES and "docs/options.md" in PAGES


def test_every_readme_snippet_has_a_covering_test() -> None:
    missing = [f"{s.page}: {s.key}" for s in readme.all_snippets() if not readme.covering_test(s)]
    assert missing == [], (
        "snippets no test runs: add a test and either an entry in COVERAGE "
        "(tests/integration/docs/readme.py) or a `<!-- covered by: tests/...::test_name -->` "
        "comment right above the block"
    )


def test_coverage_names_no_snippet_the_readme_lost() -> None:
    keys = {s.key for s in readme.all_snippets()}
    assert sorted(set(readme.COVERAGE) - keys) == []


def test_a_block_repeated_on_several_pages_is_the_same_everywhere() -> None:
    """A test runs a block found by its key on the first page that has it: a copy on another
    page must not drift from it."""
    texts: dict[str, set[str]] = {}
    for found in readme.all_snippets():
        if found.lang:
            texts.setdefault(found.key, set()).add(found.text)
    assert {key: len(found) for key, found in texts.items() if len(found) > 1} == {}


def test_covered_by_comments_name_tests_that_exist() -> None:
    named = [(s.page, s.covered_by) for s in readme.all_snippets() if s.covered_by]
    for page, test in named:
        path, _, name = test.partition("::")
        assert path.startswith("tests/") and name, f"{page}: {test}"
        assert (REPO / path).is_file(), f"{page}: {test}"
        assert name in defined_functions(REPO / path), f"{page}: {test}"


def test_a_covered_by_comment_covers_the_block_or_paragraph_below_it_only() -> None:
    page = (
        "<!-- covered by: tests/unit/x.py::test_a -->\n```bash\nmake new-thing\n```\n\n"
        "```bash\nmake other-thing\n```\n\n"
        "<!-- covered by: tests/unit/x.py::test_b -->\n"
        "Run `make first` and\n`python jobs/x.py`.\n\n"
        "Then `make second`.\n"
    )
    found = {s.key: s.covered_by for s in readme.snippets(page)}
    assert found == {
        "```bash make new-thing": "tests/unit/x.py::test_a",
        "```bash make other-thing": "",
        "make first": "tests/unit/x.py::test_b",
        "python jobs/x.py": "tests/unit/x.py::test_b",
        "make second": "",
    }


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
    named = set(re.findall(r"^make ([\w-]+)", EVERY_TEXT, re.MULTILINE)) | set(
        re.findall(r"`make ([\w-]+)`", EVERY_TEXT)
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


def test_every_repository_path_the_pages_name_exists() -> None:
    pattern = r"`((?:tests|spark_eos_connect|jobs|notebooks|docs)/[\w./-]*)`"
    paths = {(page, p) for page, text in PAGES.items() for p in re.findall(pattern, text)}
    assert paths
    assert sorted((page, p) for page, p in paths if not (REPO / p).exists()) == []
