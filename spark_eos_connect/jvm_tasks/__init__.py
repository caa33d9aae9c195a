"""Kafka Connect's Java source connectors run under the Python exactly-once machinery (issue 46).

A Java plugin found on `plugin.path` runs in a JVM task host (`java/task-host`, its protocol in
`TaskHostMain`'s class comment): `client` spawns and drives it, `java_source_task` is the
`SourceTask` adapter the task loop runs (its records arrive converted, in columns:
`converted`), `connector` the driver-side connector that asks a JVM of the driver's own, and
`resolution` the rule that decides between a Java plugin and a built-in Python connector.
"""
