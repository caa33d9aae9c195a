import gc
from collections.abc import Iterator

import pytest

from spark_eos_connect.spark import worker_gc
from spark_eos_connect.spark.worker_gc import settle_heap


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(worker_gc, "_calls", {})
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_second_task_of_a_worker_freezes_what_exists_then() -> None:
    settle_heap()  # the first task: its imports are still to come
    assert gc.get_freeze_count() == 0

    settle_heap()
    frozen = gc.get_freeze_count()
    assert frozen > 0

    kept = [[] for _ in range(100)]  # a later task's objects stay collectable
    settle_heap()
    assert gc.get_freeze_count() <= frozen  # frozen objects may still be freed, none join
    assert any(o is kept[0] for o in gc.get_objects())


def test_a_forked_worker_counts_its_own_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    settle_heap()
    monkeypatch.setattr(worker_gc.os, "getpid", lambda: -1)  # as in a child the daemon forked
    settle_heap()
    assert gc.get_freeze_count() == 0
