package io.github.sparkeosconnect.taskhost;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;

/** A connector that, once started, asks for a task reconfiguration and raises an error; it
 * says it can define transaction boundaries. */
public final class SignallingConnector extends TestSourceConnector {

    @Override
    public void start(Map<String, String> props) {
        context().requestTaskReconfiguration();
        context().raiseError(new ConnectException("the source went away"));
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ScriptedTasks.Flaky.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(Map.of());
    }

    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(
            Map<String, String> config) {
        return ConnectorTransactionBoundaries.SUPPORTED;
    }
}
