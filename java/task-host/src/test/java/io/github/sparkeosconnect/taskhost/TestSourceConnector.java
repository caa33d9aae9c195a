package io.github.sparkeosconnect.taskhost;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.source.SourceConnector;

/** What the tests' source connectors share: no options, nothing to stop, version "test". */
public abstract class TestSourceConnector extends SourceConnector {

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public String version() {
        return "test";
    }
}
