"""A connector's lifecycle on the driver and the driver as its Connect leader (new generations in
the config topic), over the ports."""
