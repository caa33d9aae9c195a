"""DeltaSink writes DataFrames in foreachBatch and does not run Connect's SMTs: a `transforms`
(or `predicates`) option is refused at `delta_sink(options)`, pointing to DataFrame code."""

from __future__ import annotations

import pytest

from spark_eos_connect.delta import delta_sink
from spark_eos_connect.errors import ConfigError


@pytest.mark.parametrize("option", ["transforms", "Transforms", "predicates"])
def test_delta_sink_refuses_transforms_naming_the_option_and_the_alternative(option: str) -> None:
    options = {"name": "d", "topics": "t", "path": "/tmp/never", option: "route"}

    with pytest.raises(ConfigError) as caught:
        delta_sink(options)

    message = str(caught.value)
    assert f"Option {option.lower()} is not supported by DeltaSink" in message
    assert "not applied to Delta" in message
    assert "before delta_sink" in message


def test_an_empty_transforms_list_is_no_chain() -> None:
    from spark_eos_connect.delta.batch_sink import refuse_transforms

    refuse_transforms({"transforms": " , "})  # nothing to refuse
