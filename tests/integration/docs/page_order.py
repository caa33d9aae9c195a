"""Running a docs page as a reader would: its fenced blocks one after the other, in page order,
in one Python namespace (a notebook's), with only literal replacements for hosts, ports, paths
and names. The shared setup block is checked, not run (the test session's broker and
environment stand in for it); other shell blocks run line by line in a shell of the project's
environment (`export` lines carried to the lines after them, `&` lines left running in the
background until the page's run is closed); SQL blocks run as `psql` would run them, as the
superuser. A block that cannot run here (another broker, a Spark cluster, placeholders for
secrets) is skipped with `covered_elsewhere`, which checks that its coverage note names a test
that runs it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_eos_connect.testing.postgres import PostgresCluster

from .readme import DIAGRAM_LANGS, REPO, VENV_BIN, covering_test, shell_lines, snippets

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


@dataclass(frozen=True)
class ShellLine:
    """One command of a shell block as it ran: the page's line (continuations joined, without
    its comment), the comment, and what it printed; `status` is the HTTP status of a `curl`
    line (its output is the body alone), `background` the process of a `&` line."""

    line: str
    comment: str
    returncode: int | None
    stdout: str
    stderr: str
    status: int | None = None
    background: subprocess.Popen[bytes] | None = None


def reader_shell_env() -> dict[str, str]:
    """A shell after the setup block's `source .venv/bin/activate`, with nothing of the test
    session's own settings for the admin commands."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EOSCONNECT_")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    return env


@dataclass
class PageRun:
    """A page's blocks run in order: each `*_block` method runs the next block, which must be
    of its language; `python` replacements are exact string literals, `sql` and `shell` ones
    whole words. Shell blocks run in `cwd`."""

    page: Path
    python: dict[str, str] = field(default_factory=dict)
    sql: dict[str, str] = field(default_factory=dict)
    shell: dict[str, str] = field(default_factory=dict)
    postgres: PostgresCluster | None = None
    cwd: Path | None = None
    namespace: dict[str, Any] = field(default_factory=dict)
    position: int = 0
    used: set[str] = field(default_factory=set)
    exports: list[str] = field(default_factory=list)
    background: list[subprocess.Popen[bytes]] = field(default_factory=list)

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

    def sql_block(self, default_database: str = "postgres") -> list[tuple[Any, ...]]:
        """Run the next block (SQL) as the server's superuser, as `psql` would; the rows the
        last statement returned (none for a statement that returns no rows)."""
        assert self.postgres is not None
        text = self._replaced(self._next("sql").text, self.sql)
        rows: list[tuple[Any, ...]] = []
        for database, statement in sql_statements(text):
            with self.postgres.database(database or default_database).connect() as connection:
                cursor = connection.execute(statement)
                rows = [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        return rows

    def _replaced(self, text: str, replacements: dict[str, str]) -> str:
        for old in replacements:
            if re.search(rf"(?<![\w.-]){re.escape(old)}(?![\w-])", text):
                self.used.add(old)
        return replace_words(text, replacements)

    def shell_text(
        self,
        text: str,
        timeout_s: float = 120.0,
        after: Callable[[ShellLine], None] | None = None,
    ) -> list[ShellLine]:
        """Run `text` (a block's, or an inline command of the page) as the shell would;
        `after(line)` is called after each line, for a test that waits where a line's comment
        says something happens."""
        assert self.cwd is not None, "shell blocks need a working folder"
        ran: list[ShellLine] = []
        for line, comment in shell_lines(text):
            command = self._replaced(line, self.shell)
            if command.startswith("export "):
                self.exports.append(command)
                ran.append(ShellLine(line, comment, 0, "", ""))
                continue
            script = "\n".join([*self.exports, command])
            if command.endswith("&"):
                ran.append(self._in_background(line, comment, script.removesuffix("&")))
                continue
            curl = command.startswith("curl ")
            if curl:
                script += " -w '\\n%{http_code}'"
            done = subprocess.run(
                ["bash", "-c", script],
                cwd=self.cwd,
                env=reader_shell_env(),
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
            stdout, status = done.stdout, None
            if curl:
                stdout, _, code = stdout.rpartition("\n")
                status = int(code)
            ran.append(ShellLine(line, comment, done.returncode, stdout, done.stderr, status))
            if after is not None:
                after(ran[-1])
        return ran

    def _in_background(self, line: str, comment: str, script: str) -> ShellLine:
        assert self.cwd is not None
        log = self.cwd / f"background-{len(self.background)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["bash", "-c", script],
                cwd=self.cwd,
                env=reader_shell_env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.background.append(process)
        return ShellLine(line, comment, None, "", "", background=process)

    def shell_block(
        self, timeout_s: float = 120.0, after: Callable[[ShellLine], None] | None = None
    ) -> list[ShellLine]:
        """Run the next block (shell), line by line; what each line did."""
        return self.shell_text(self._next("bash").text, timeout_s, after)

    def save_block(self, lang: str, path: Path) -> Block:
        """Save the next block to `path`, as the page tells the reader to (a module file)."""
        block = self._next(lang)
        path.write_text(block.text)
        return block

    def covered_elsewhere(self, lang: str) -> str:
        """Skip the next block, one that cannot run here; the test its coverage note (its
        `covered by` comment or `COVERAGE` entry) names, which runs it instead."""
        block = self._next(lang)
        found = [
            s for s in snippets(self.page.read_text()) if (s.lang, s.text) == (lang, block.text)
        ]
        covering = covering_test(found[0])
        assert covering, f"{self.page.name}: no test runs {found[0].key}"
        return covering

    def close(self) -> None:
        """Stop what the page's `&` lines left running (their whole process groups)."""
        for process in self.background:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for process in self.background:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)

    def finished(self) -> None:
        """Every block ran, and every replacement was used."""
        assert self.position == len(self.blocks), (
            f"{self.page.name}: blocks {self.position + 1}.. not run: "
            f"{[b.text[:60] for b in self.blocks[self.position :]]}"
        )
        unused = (set(self.python) | set(self.sql) | set(self.shell)) - self.used
        assert not unused, f"replacements the page no longer needs: {sorted(unused)}"


def slot_and_publications_left(
    postgres: PostgresCluster, database: str, slot: str
) -> tuple[int, int]:
    """What a page's clean-up SQL should have removed from `database`: (replication slots
    named `slot`, publications) still there."""
    with postgres.database(database).connect() as connection:
        slots = connection.execute(
            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s", (slot,)
        ).fetchone()
        publications = connection.execute("SELECT count(*) FROM pg_publication").fetchone()
    return slots[0], publications[0]
