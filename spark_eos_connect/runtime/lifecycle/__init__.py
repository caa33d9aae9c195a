"""A connector's lifecycle on the driver: its instance (`connector_lifecycle`), the driver as its
Connect leader starting new generations in the config topic (`leadership`), and the driver as its
owner in the status topic (`connector_owner`: claim, heartbeat, status, leaving; over
`liveness` and `leaving`), over the ports."""
