package io.github.sparkeosconnect.testplugins;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A test connector that defines its own transactions: one task numbering records 0, 1, ...
 * {@code records - 1} into {@code topic}, in transactions of {@code transaction.size} records,
 * every {@code abort.every}-th of them aborted ({@link ScriptedTransactionsSourceTask}). It
 * supports exactly-once delivery and connector-defined transaction boundaries.
 */
public final class ScriptedTransactionsSourceConnector extends SourceConnector {

    static final String TOPIC = "topic";
    static final String RECORDS = "records";
    static final String TRANSACTION_SIZE = "transaction.size";
    static final String ABORT_EVERY = "abort.every";
    static final String POLL_SIZE = "poll.size";

    static final ConfigDef CONFIG = new ConfigDef()
            .define(TOPIC, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE,
                    ConfigDef.Importance.HIGH, "The topic the records go to.")
            .define(RECORDS, ConfigDef.Type.LONG, 100L, ConfigDef.Range.atLeast(0),
                    ConfigDef.Importance.MEDIUM, "How many records, numbered from 0.")
            .define(TRANSACTION_SIZE, ConfigDef.Type.INT, 10, ConfigDef.Range.atLeast(1),
                    ConfigDef.Importance.MEDIUM, "Records per transaction.")
            .define(ABORT_EVERY, ConfigDef.Type.INT, 3, ConfigDef.Range.atLeast(0),
                    ConfigDef.Importance.MEDIUM,
                    "Transaction k (from 0) is aborted when (k + 1) is a multiple of it; 0: none.")
            .define(POLL_SIZE, ConfigDef.Type.INT, 0, ConfigDef.Range.atLeast(0),
                    ConfigDef.Importance.LOW,
                    "Records per poll() at most (0: transaction.size); a poll never spans "
                            + "two transactions.");

    private Map<String, String> props;

    @Override
    public void start(Map<String, String> props) {
        CONFIG.parse(props);
        this.props = Map.copyOf(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ScriptedTransactionsSourceTask.class;
    }

    /** The task config carries what the connector's own offset reader (its context's) says
     * of the task's source partition: {@code connector.saw.position}, the committed position
     * or "none"; anything but a Long fails, as the task does. */
    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        Map<String, Object> offset = context().offsetStorageReader()
                .offset(Map.of("topic", props.get(TOPIC)));
        Object position = offset == null ? null : offset.get("position");
        if (position != null && !(position instanceof Long)) {
            throw new ConnectException("the connector's offset reader gave position "
                    + position + " as a " + position.getClass().getName() + ", not a Long");
        }
        Map<String, String> config = new HashMap<>(props);
        config.put("connector.saw.position", position == null ? "none" : position.toString());
        return List.of(config);
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> config) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(
            Map<String, String> config) {
        return ConnectorTransactionBoundaries.SUPPORTED;
    }

    @Override
    public String version() {
        return "1";
    }
}
