"""The bench's task-host memory sampling, on a fake `/proc`."""

from __future__ import annotations

from pathlib import Path

from spark_eos_connect.apps.bench.host_memory import PeakHostMemory, resident_kib, task_host_pids
from spark_eos_connect.jvm_tasks.classpath import MAIN_CLASS
from spark_eos_connect.testing import wait_for


def fake_process(proc: Path, pid: int, command: list[str], rss_kib: int) -> None:
    folder = proc / str(pid)
    folder.mkdir(parents=True)
    (folder / "cmdline").write_bytes(b"\0".join(part.encode() for part in command) + b"\0")
    (folder / "status").write_text(f"Name:\tjava\nVmPeak:\t 9999999 kB\nVmRSS:\t {rss_kib} kB\n")


def test_rss_is_read_from_the_status_file() -> None:
    assert resident_kib("Name:\tjava\nVmRSS:\t   84512 kB\nThreads:\t21\n") == 84512
    assert resident_kib("Name:\tkthreadd\nThreads:\t1\n") is None


def test_only_processes_running_the_task_hosts_main_class_count(tmp_path: Path) -> None:
    fake_process(tmp_path, 11, ["java", "-Xmx64m", "-cp", "x/*", MAIN_CLASS, "/plugins"], 90_000)
    fake_process(tmp_path, 12, ["java", "-cp", "y/*", "org.apache.spark.deploy.SparkSubmit"], 9)
    fake_process(tmp_path, 13, ["python", "-c", f"print('{MAIN_CLASS}')"], 5)
    (tmp_path / "self").mkdir()

    assert task_host_pids(tmp_path) == [11]


def test_the_peak_is_the_largest_host_seen_while_the_block_ran(tmp_path: Path) -> None:
    fake_process(tmp_path, 21, ["java", MAIN_CLASS], 80 * 1024)
    fake_process(tmp_path, 22, ["java", MAIN_CLASS], 120 * 1024)

    with PeakHostMemory(tmp_path) as memory:
        wait_for(lambda: memory.peak_mib > 0, 10, "a sample")

    assert memory.peak_mib == 120
