"""The one switch between the kill campaigns' short form (`make test`) and long form."""

from __future__ import annotations

import pytest

from spark_eos_connect.testing.campaigns import FULL_ENV, full_run


@pytest.mark.parametrize(
    ("value", "full"), [(None, False), ("", False), ("1", False), ("full", True)]
)
def test_only_full_selects_the_long_form(
    monkeypatch: pytest.MonkeyPatch, value: str | None, full: bool
) -> None:
    if value is None:
        monkeypatch.delenv(FULL_ENV, raising=False)
    else:
        monkeypatch.setenv(FULL_ENV, value)

    assert full_run() is full
