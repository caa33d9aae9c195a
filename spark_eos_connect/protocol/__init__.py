"""Pure-Python Kafka Connect wire formats: partitioning, HashMap order, internal-topic records."""
