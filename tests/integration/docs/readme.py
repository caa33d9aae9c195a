"""The snippets (fenced code blocks and inline shell commands) of the README and of the pages in
`docs/`, keyed by a stable first line, and which test exercises each one: an entry in `COVERAGE`,
or a `<!-- covered by: tests/...::test_name -->` comment right above the block (or above the
paragraph holding the inline commands). Pure Python: the unit tests load it too."""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
DOCS = REPO / "docs"
VENV_BIN = Path(sys.executable).parent
"""Where the `eosconnect` console script the README runs is installed."""

COMMAND_WORDS = frozenset(
    {"python", "python3", "eosconnect", "make", "curl", "spark-submit", "pip"}
)
"""An inline code span is a command when its first word is one of these."""

CI = "CI:"
"""Prefix of a coverage entry exercised by CI itself rather than by a test in this folder."""
ELSEWHERE = "TEST:"
"""Prefix of a coverage entry naming a test outside this folder (`TEST:path::name`), for
snippets that need another folder's fixtures (the Spark cluster's)."""

DIAGRAM_LANGS = frozenset({"mermaid"})
"""Fenced blocks that are pictures, not code: no test runs them."""

COVERAGE: dict[str, str] = {
    # `make demo` and `make test` are the two commands CI runs: `make test` runs this suite,
    # `make demo` the demo job; both run `make setup` first (checked by the unit test).
    "```bash make demo": f"{CI} make demo and make test",
    "make setup": f"{CI} the first step of make demo and make test",
    "make demo": f"{ELSEWHERE}tests/integration/jobs/test_demo.py"
    "::test_demo_stages_print_a_clean_run",
    "make test": f"{CI} .ci/run runs it",
    "make help": "test_make_help_lists_the_targets_the_readme_names",
    "```python import spark_eos_connect": f"{ELSEWHERE}"
    "tests/integration/docs/test_getting_started_page.py"
    "::test_the_getting_started_page_runs_in_page_order",
    "python jobs/source_to_kafka.py": "test_source_to_kafka_job_command",
    "```python from spark_eos_connect.delta import delta_sink, starting_offsets": f"{ELSEWHERE}"
    "tests/integration/docs/test_sinks_and_delta_page.py"
    "::test_the_sinks_and_delta_page_runs_in_page_order",
    "python jobs/kafka_to_delta.py": "test_kafka_to_delta_job_command",
    "make bench": "test_bench_command_on_a_small_run",
    "python jobs/bench.py": "test_bench_command_on_a_small_run",
    "eosconnect rest": f"{ELSEWHERE}tests/integration/docs/test_rest_and_cli_page.py"
    "::test_the_rest_and_cli_page_runs_in_page_order",
    "make docs": f"{ELSEWHERE}tests/unit/test_docs_site.py"
    "::test_the_site_builds_strict_with_the_options_and_api_reference",
    "```python import json": "test_connect_config_runs_unchanged",
    "eosconnect kafka": f"{ELSEWHERE}tests/integration/security/test_cli_kafka_security.py"
    "::test_secured_cli_broker_announces_settings_that_log_in",
    "make test-cluster": "test_make_test_cluster_collects_exactly_the_cluster_tests",
    "make test-times": "test_make_test_times_writes_each_tests_phases_then_names_the_slowest_files",
    "make test-failover": f"{ELSEWHERE}tests/integration/failover/test_source_failover.py"
    "::test_exactly_once_source_rides_out_broker_kills",
    "make dist": f"{ELSEWHERE}tests/integration/jobs/test_wheel.py"
    "::test_make_dist_builds_a_wheel_and_an_sdist",
}
"""Snippet key -> the test in `test_readme_snippets.py` that runs it (or a `CI:` note)."""

COVERED_BY = "covered by:"
"""A docs page's own coverage note: `<!-- covered by: tests/path.py::test_name -->`."""


@dataclass(frozen=True)
class Snippet:
    """One fenced block (`lang` set) or inline command (`lang` empty) of a page."""

    key: str
    text: str
    lang: str = ""
    covered_by: str = ""
    """The `tests/...::test_name` a `covered by` comment above it names, if any."""
    page: str = ""
    """The page it is on, relative to the repository (empty for a text given directly)."""


_FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`]+)`")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_COVERED = re.compile(r"<!--\s*covered by:\s*(\S+?)\s*-->\s*$")
_PARAGRAPHS = re.compile(r"\n\s*\n")


def _first_line_key(lang: str, text: str) -> str:
    first = next(line for line in text.splitlines() if line.strip())
    return f"```{lang} {' '.join(strip_comment(first).split())}"


def _covered_by(before: str) -> str:
    """The test a `covered by` comment ending `before` (blanks aside) names, else ''."""
    match = _COVERED.search(before)
    return match.group(1) if match else ""


def snippets(markdown: str, page: str = "") -> list[Snippet]:
    """Every fenced block, then every inline command, in page order."""
    found = [
        Snippet(
            _first_line_key(m.group(2), m.group(3)),
            m.group(3),
            m.group(2),
            _covered_by(markdown[: m.start()]),
            page,
        )
        for m in _FENCE.finditer(markdown)
        if m.group(2) not in DIAGRAM_LANGS
    ]
    for paragraph in _PARAGRAPHS.split(_FENCE.sub("\n\n", markdown)):
        leading = _COMMENT.match(paragraph.lstrip())  # a comment opening the paragraph
        covered = _covered_by(leading.group(0)) if leading else ""
        for match in _INLINE.finditer(_COMMENT.sub("", paragraph)):
            words = match.group(1).split()
            if len(words) >= 2 and words[0] in COMMAND_WORDS:
                found.append(Snippet(" ".join(words[:2]), " ".join(words), "", covered, page))
    return found


def pages() -> list[Path]:
    """The README, then every Markdown page under `docs/`, sorted."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def all_snippets() -> list[Snippet]:
    """The snippets of every page (`pages()`), each with its page."""
    return [
        found
        for path in pages()
        for found in snippets(path.read_text(), str(path.relative_to(REPO)))
    ]


def covering_test(found: Snippet) -> str | None:
    """What runs `found`: its `covered by` comment, else its `COVERAGE` entry, else None."""
    return found.covered_by or COVERAGE.get(found.key)


def snippet(key: str, markdown: str | None = None) -> Snippet:
    """The snippet with `key` in `markdown`, or else on the first page that has it (the README,
    then `docs/`); the first one when an inline command appears twice."""
    candidates = all_snippets() if markdown is None else snippets(markdown)
    for candidate in candidates:
        if candidate.key == key:
            return candidate
    raise AssertionError(f"no page has the snippet {key!r} any more: update COVERAGE")


def strip_comment(line: str) -> str:
    """A shell line without its trailing `# comment` (quotes respected)."""
    return split_comment(line)[0]


def split_comment(line: str) -> tuple[str, str]:
    """`(command, comment)` of one shell line; `#` starts a comment after a blank, unquoted."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip(), line[index + 1 :].strip()
    return line.rstrip(), ""


def shell_lines(block: str) -> list[tuple[str, str]]:
    """`(command, comment)` per command of a shell block, `\\` continuations joined."""
    commands: list[tuple[str, str]] = []
    pending = ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command, comment = split_comment(pending + line)
        pending = ""
        if command.strip():
            commands.append((command.strip(), comment))
    return commands


def replace_tokens(argv: list[str], replacements: dict[str, str]) -> list[str]:
    """`argv` with whole tokens replaced; each token to replace must occur exactly once."""
    for old in replacements:
        assert argv.count(old) == 1, f"{old!r} should occur once in {shlex.join(argv)}"
    return [replacements.get(token, token) for token in argv]


def replace_literals(code: str, replacements: dict[str, str]) -> str:
    """`code` with exact string literals `"old"` replaced by `"new"` (each must occur)."""
    for old, new in replacements.items():
        assert f'"{old}"' in code, f'the snippet no longer contains "{old}"'
        code = code.replace(f'"{old}"', f'"{new}"')
    return code


def make_targets(makefile: str) -> dict[str, tuple[list[str], list[str]]]:
    """Target -> (prerequisites, recipe lines) of a simple Makefile."""
    targets: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] | None = None
    for line in makefile.splitlines():
        rule = re.match(r"^([a-z][\w-]*):(?!=)([^#]*)", line)
        if rule:
            current = []
            targets[rule.group(1)] = (rule.group(2).split(), current)
        elif line.startswith("\t") and current is not None:
            current.append(line[1:])
        elif line.strip() and not line.startswith("#"):
            current = None
    return targets
