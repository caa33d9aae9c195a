"""The Debezium options that decide how PostgreSQL column values become Connect values.

Names, values and defaults are Debezium's PostgreSQL connector's: `decimal.handling.mode`,
`time.precision.mode`, `binary.handling.mode`, `interval.handling.mode`,
`hstore.handling.mode`, `money.fraction.digits` and `unavailable.value.placeholder`.
Values Debezium knows but this connector does not implement are refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from spark_eos_connect.api.config import ConfigDef, ConfigType, Range
from spark_eos_connect.errors import ConfigError

__all__ = [
    "BINARY_HANDLING_MODE",
    "DECIMAL_HANDLING_MODE",
    "DEFAULT_SETTINGS",
    "HSTORE_HANDLING_MODE",
    "INTERVAL_HANDLING_MODE",
    "MONEY_FRACTION_DIGITS",
    "TIME_PRECISION_MODE",
    "UNAVAILABLE_VALUE_PLACEHOLDER",
    "ValueSettings",
    "define_value_options",
]

DECIMAL_HANDLING_MODE: Final = "decimal.handling.mode"
TIME_PRECISION_MODE: Final = "time.precision.mode"
BINARY_HANDLING_MODE: Final = "binary.handling.mode"
INTERVAL_HANDLING_MODE: Final = "interval.handling.mode"
HSTORE_HANDLING_MODE: Final = "hstore.handling.mode"
MONEY_FRACTION_DIGITS: Final = "money.fraction.digits"
UNAVAILABLE_VALUE_PLACEHOLDER: Final = "unavailable.value.placeholder"

DECIMAL_MODES: Final = ("precise", "double", "string")
TIME_MODES: Final = ("adaptive", "adaptive_time_microseconds", "connect", "microseconds")
BINARY_MODES: Final = ("bytes", "base64", "base64-url-safe", "hex")
INTERVAL_MODES: Final = ("numeric", "string")
HSTORE_MODES: Final = ("json", "map")

_CHOICES: Final = {
    DECIMAL_HANDLING_MODE: DECIMAL_MODES,
    TIME_PRECISION_MODE: TIME_MODES,
    BINARY_HANDLING_MODE: BINARY_MODES,
    INTERVAL_HANDLING_MODE: INTERVAL_MODES,
    HSTORE_HANDLING_MODE: HSTORE_MODES,
}

_REFUSED: Final[dict[str, dict[str, str]]] = {
    TIME_PRECISION_MODE: {
        "isostring": "ISO-string temporal values are not implemented",
        "nanoseconds": "nanosecond temporal values are not implemented",
    },
}
"""Values Debezium accepts that this connector refuses, with why."""


@dataclass(frozen=True)
class Choice:
    """One of `values` (case-insensitive, as Debezium reads them); a value Debezium knows but
    this connector does not implement is refused with the reason."""

    values: tuple[str, ...]
    refused: Mapping[str, str]

    def __call__(self, name: str, value: Any) -> None:
        given = str(value).strip().lower()
        if given in self.refused:
            raise ConfigError(
                f"{name}={value!r} is not supported by PostgresCdcSource "
                f"({self.refused[given]}); use one of {', '.join(self.values)}"
            )
        if given not in self.values:
            raise ConfigError(f"{name}={value!r} is not one of {', '.join(self.values)}")

    def __str__(self) -> str:
        return "one of " + ", ".join(self.values)


def _choice(name: str, values: tuple[str, ...]) -> Choice:
    return Choice(values, _REFUSED.get(name, {}))


def define_value_options(config_def: ConfigDef) -> ConfigDef:
    """`config_def` with the value-mapping options defined (Debezium's names and defaults)."""
    return (
        config_def.define(
            DECIMAL_HANDLING_MODE,
            ConfigType.STRING,
            "precise",
            _choice(DECIMAL_HANDLING_MODE, DECIMAL_MODES),
            doc="How `numeric`, `decimal` and `money` values are represented: `precise` a "
            "Connect Decimal (a `numeric` without scale Debezium's VariableScaleDecimal), "
            "`double` a float64, `string` their plain text.",
        )
        .define(
            TIME_PRECISION_MODE,
            ConfigType.STRING,
            "adaptive",
            _choice(TIME_PRECISION_MODE, TIME_MODES),
            doc="How `date`, `time` and `timestamp` values are represented: `adaptive` by the "
            "column's precision (milliseconds up to 3 fraction digits, microseconds above), "
            "`adaptive_time_microseconds` likewise but `time` always in microseconds, "
            "`microseconds` always microseconds, `connect` Kafka Connect's Date, Time and "
            "Timestamp (milliseconds).",
        )
        .define(
            BINARY_HANDLING_MODE,
            ConfigType.STRING,
            "bytes",
            _choice(BINARY_HANDLING_MODE, BINARY_MODES),
            doc="How `bytea` values are represented: `bytes`, or a `base64`, "
            "`base64-url-safe` or `hex` string.",
        )
        .define(
            INTERVAL_HANDLING_MODE,
            ConfigType.STRING,
            "numeric",
            _choice(INTERVAL_HANDLING_MODE, INTERVAL_MODES),
            doc="How `interval` values are represented: `numeric` approximate microseconds "
            "(io.debezium.time.MicroDuration), `string` an ISO-8601 duration "
            "(io.debezium.time.Interval).",
        )
        .define(
            HSTORE_HANDLING_MODE,
            ConfigType.STRING,
            "json",
            _choice(HSTORE_HANDLING_MODE, HSTORE_MODES),
            doc="How `hstore` values are represented: `json` a JSON object string "
            "(io.debezium.data.Json), `map` a map of strings.",
        )
        .define(
            MONEY_FRACTION_DIGITS,
            ConfigType.INT,
            2,
            Range.between(0, 32767),
            importance="low",
            doc="The scale of `money` values with `decimal.handling.mode=precise`.",
        )
        .define(
            UNAVAILABLE_VALUE_PLACEHOLDER,
            ConfigType.STRING,
            "__debezium_unavailable_value",
            importance="low",
            doc="What stands for an unchanged TOASTed value an update does not carry "
            "(`hex:` followed by hex digits for arbitrary bytes).",
        )
    )


@dataclass(frozen=True, slots=True)
class ValueSettings:
    """The value-mapping options, parsed."""

    decimal_mode: str = "precise"
    time_precision_mode: str = "adaptive"
    binary_mode: str = "bytes"
    interval_mode: str = "numeric"
    hstore_mode: str = "json"
    money_fraction_digits: int = 2
    unavailable_value_placeholder: str = "__debezium_unavailable_value"

    @staticmethod
    def from_config(parsed: Mapping[str, Any]) -> ValueSettings:
        """The settings of a parsed configuration (absent options take Debezium's defaults)."""
        default = ValueSettings()

        def mode(name: str, current: str) -> str:
            value = parsed.get(name)
            return current if value is None else str(value).strip().lower()

        digits = parsed.get(MONEY_FRACTION_DIGITS)
        placeholder = parsed.get(UNAVAILABLE_VALUE_PLACEHOLDER)
        for name, values in _CHOICES.items():
            if parsed.get(name) is not None:
                _choice(name, values)(name, parsed[name])
        return ValueSettings(
            decimal_mode=mode(DECIMAL_HANDLING_MODE, default.decimal_mode),
            time_precision_mode=mode(TIME_PRECISION_MODE, default.time_precision_mode),
            binary_mode=mode(BINARY_HANDLING_MODE, default.binary_mode),
            interval_mode=mode(INTERVAL_HANDLING_MODE, default.interval_mode),
            hstore_mode=mode(HSTORE_HANDLING_MODE, default.hstore_mode),
            money_fraction_digits=(
                default.money_fraction_digits if digits is None else int(digits)
            ),
            unavailable_value_placeholder=(
                default.unavailable_value_placeholder if placeholder is None else str(placeholder)
            ),
        )

    @property
    def placeholder_bytes(self) -> bytes:
        """The placeholder as bytes (`hex:` values decoded, others UTF-8), as Debezium has it."""
        text = self.unavailable_value_placeholder
        if text.startswith("hex:"):
            return bytes.fromhex(text[4:])
        return text.encode()


DEFAULT_SETTINGS: Final = ValueSettings()
"""Debezium's defaults."""
