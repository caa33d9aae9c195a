"""What a test shows of a job that ended otherwise than expected: the causes its Spark log holds
(a quiet job's console keeps one line per lost task) and the end of its console."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_SPARK_LOG = re.compile(r"^Spark's log: (\S+)$", re.MULTILINE)
_CAUSE = re.compile(r"(Caused by: |\w+(Error|Exception|Fault)\b: |^error: )")


def spark_log(stdout: str) -> str:
    """The Spark log a job names on its first lines, or "" when it names none or it is gone."""
    found = _SPARK_LOG.search(stdout)
    if found is None:
        return ""
    try:
        return Path(found.group(1)).read_text(errors="replace")
    except FileNotFoundError:
        return ""


def first_causes(text: str, limit: int = 12) -> list[str]:
    """The first `limit` distinct lines of `text` that name an error or its cause."""
    causes: dict[str, None] = {}
    for line in text.splitlines():
        if _CAUSE.search(line) and len(causes) < limit:
            causes.setdefault(line.strip()[:300])
    return list(causes)


def job_report(job: subprocess.CompletedProcess[str], tail_chars: int = 2000) -> str:
    """The causes a job's log and console name, first, then its console's last lines."""
    causes = first_causes(spark_log(job.stdout or "")) + first_causes(job.stderr or "")
    console_end = (job.stderr or "")[-tail_chars:]
    header = f"exit code {job.returncode}; causes named:"
    return "\n".join([header, *causes, "--- console's end:", console_end])
