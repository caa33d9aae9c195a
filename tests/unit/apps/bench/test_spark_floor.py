"""The first-record floor job's command line."""

from __future__ import annotations

import pytest

from spark_eos_connect.apps.bench.spark_floor import main


def test_the_job_refuses_a_wrong_command_line_with_its_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["only-a-marker"]) == 2
    assert "MARKER CHECKPOINT" in capsys.readouterr().err
