"""What the package calls itself, in one place: its release and its Spark data source's name."""

__version__ = "0.1.0"

DATA_SOURCE_NAME = "eosconnect"
"""`spark.readStream.format("eosconnect")` and `writeStream.format("eosconnect")`."""
