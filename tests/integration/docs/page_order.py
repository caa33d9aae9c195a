"""Running a docs page as a reader would: its fenced blocks one after the other, in page order,
in one Python namespace (a notebook's), with only literal replacements for hosts, ports, paths
and names. Shell blocks are the shared setup block (checked, not run: the test session's broker
and environment stand in for it); SQL blocks run as `psql` would run them, as the superuser.
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_eos_connect.testing.postgres import PostgresCluster

from .readme import DIAGRAM_LANGS, REPO

SETUP_BLOCK = (
    "source .venv/bin/activate  # the project's Python environment, with the eosconnect command\n"
    "eosconnect kafka --port 9092 &  # a local broker on 127.0.0.1:9092 (or use your own)\n"
)
"""The shell block every page with runnable examples opens with (the same text everywhere)."""

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language and text."""

    lang: str
    text: str


def page_blocks(page: Path) -> list[Block]:
    """The page's runnable fenced blocks, in page order (diagrams left out)."""
    return [
        Block(m.group(1), m.group(2))
        for m in _FENCE.finditer(page.read_text())
        if m.group(1) not in DIAGRAM_LANGS
    ]


def replace_words(text: str, replacements: dict[str, str]) -> str:
    """`text` with whole words (`[\\w.-]` on neither side) replaced."""
    for old, new in replacements.items():
        text = re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w-])", new, text)
    return text


def sql_statements(block: str) -> list[tuple[str | None, str]]:
    """`(database to connect to or None, statement)` per statement of a `psql` block: `--`
    comments dropped, `\\connect db` switching the database for the statements after it."""
    result: list[tuple[str | None, str]] = []
    database: str | None = None
    pending: list[str] = []
    for line in block.splitlines():
        line = re.sub(r"--.*$", "", line).rstrip()
        if line.startswith("\\connect "):
            database = line.split()[1]
            continue
        pending.append(line)
        if line.endswith(";"):
            statement = "\n".join(pending).strip().rstrip(";")
            pending = []
            if statement:
                result.append((database, statement))
    assert not "".join(pending).strip(), f"a statement without its ';': {pending}"
    return result


@dataclass
class PageRun:
    """A page's blocks run in order: `run_next(lang)` runs the next block, which must be of
    that language, and returns it; `python` replacements are exact string literals, `sql` ones
    whole words."""

    page: Path
    python: dict[str, str] = field(default_factory=dict)
    sql: dict[str, str] = field(default_factory=dict)
    postgres: PostgresCluster | None = None
    namespace: dict[str, Any] = field(default_factory=dict)
    position: int = 0
    used: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.blocks = page_blocks(self.page)

    def _next(self, lang: str) -> Block:
        assert self.position < len(self.blocks), f"{self.page.name} has no block left"
        block = self.blocks[self.position]
        assert block.lang == lang, (
            f"block {self.position + 1} of {self.page.name} is {block.lang}, not {lang}: "
            f"{block.text[:200]}"
        )
        self.position += 1
        return block

    def _python_code(self, block: Block) -> str:
        code = block.text
        for old, new in self.python.items():
            if f'"{old}"' in code:
                self.used.add(old)
                code = code.replace(f'"{old}"', f'"{new}"')
        return code

    def setup_shell(self) -> None:
        """The shared setup block: the environment and broker it names are the test
        session's own (`eosconnect kafka` is run by the getting-started page's test)."""
        block = self._next("bash")
        assert block.text == SETUP_BLOCK, block.text
        assert (REPO / ".venv" / "bin" / "activate").is_file()

    def python_block(self) -> str:
        """Run the next block (Python) in the page's namespace; what it printed."""
        code = self._python_code(self._next("python"))
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, str(self.page), "exec"), self.namespace)
        return printed.getvalue()

    def python_block_in_background(self) -> Callable[..., None]:
        """Start the next block (Python, one that blocks, such as `awaitTermination()`) in a
        thread; returns `joined(timeout_s)`, which waits for it to return and re-raises its
        error."""
        code = compile(self._python_code(self._next("python")), str(self.page), "exec")
        errors: list[BaseException] = []

        def run() -> None:
            try:
                exec(code, self.namespace)
            except BaseException as error:  # handed to the test's thread
                errors.append(error)

        thread = threading.Thread(target=run, name="page-block", daemon=True)
        thread.start()

        def joined(timeout_s: float = 60.0) -> None:
            thread.join(timeout_s)
            assert not thread.is_alive(), "the blocking block did not return"
            if errors:
                raise errors[0]

        return joined

    def sql_block(self, default_database: str = "postgres") -> None:
        """Run the next block (SQL) as the server's superuser, as `psql` would."""
        assert self.postgres is not None
        text = self._next("sql").text
        for old in self.sql:
            if re.search(rf"(?<![\w.-]){re.escape(old)}(?![\w-])", text):
                self.used.add(old)
        for database, statement in sql_statements(replace_words(text, self.sql)):
            with self.postgres.database(database or default_database).connect() as connection:
                connection.execute(statement)

    def finished(self) -> None:
        """Every block ran, and every replacement was used."""
        assert self.position == len(self.blocks), (
            f"{self.page.name}: blocks {self.position + 1}.. not run: "
            f"{[b.text[:60] for b in self.blocks[self.position :]]}"
        )
        unused = (set(self.python) | set(self.sql)) - self.used
        assert not unused, f"replacements the page no longer needs: {sorted(unused)}"
