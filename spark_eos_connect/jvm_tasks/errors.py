"""The errors of Java plugins and their task host."""

from __future__ import annotations

from spark_eos_connect.errors import ConfigError, EosConnectError


class JavaPluginError(EosConnectError, RuntimeError):
    """A Java plugin (or its task host) failed; carries the Java exception and stack trace."""

    def __init__(self, message: str, java_class: str = "", trace: str = "") -> None:
        super().__init__(message if not trace else f"{message}\n{trace}")
        self.java_class = java_class
        self.trace = trace

    def restated(self, context: str) -> JavaPluginError:
        """This error, its message's first line after `context` (the same Java trace)."""
        first = str(self.args[0]).splitlines()[0]
        return JavaPluginError(f"{context}: {first}", self.java_class, self.trace)


class PluginPathError(ConfigError):
    """`plugin.path` names a folder that does not exist, or does not hold the class asked for."""
