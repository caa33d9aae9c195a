package io.github.sparkeosconnect.testplugins;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * A test connector that throws where its option {@code fail.in} says: in the connector's
 * {@code validate}, {@code start} or {@code taskConfigs}, or in its task's {@code start}
 * ({@code task.start}), each time a RuntimeException whose message is {@link #failure}'s. With
 * {@code fail.in=none} (the default) its one task writes the {@code values} to {@code topic}
 * ({@link FailingSourceTask}).
 */
public final class FailingSourceConnector extends SourceConnector {

    static final String TOPIC = "topic";
    static final String FAIL_IN = "fail.in";
    static final String VALUES = "values";

    static final ConfigDef CONFIG = new ConfigDef()
            .define(TOPIC, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE,
                    ConfigDef.Importance.HIGH, "The topic the values go to.")
            .define(FAIL_IN, ConfigDef.Type.STRING, "none",
                    ConfigDef.ValidString.in("none", "validate", "start", "taskConfigs",
                            "task.start"),
                    ConfigDef.Importance.HIGH, "Where to throw: none, validate, start, "
                            + "taskConfigs (the connector's) or task.start (its task's start).")
            .define(VALUES, ConfigDef.Type.LIST, "", ConfigDef.Importance.MEDIUM,
                    "The values the task writes, each once, as strings.");

    private Map<String, String> props;

    /** The RuntimeException thrown in {@code where} when {@code fail.in} names it. */
    static void failIf(String where, Map<String, String> props) {
        if (where.equals(props.get(FAIL_IN))) {
            throw new RuntimeException("failing in " + where + " as fail.in asks");
        }
    }

    @Override
    public Config validate(Map<String, String> props) {
        failIf("validate", props);
        return super.validate(props);
    }

    @Override
    public void start(Map<String, String> props) {
        failIf("start", props);
        CONFIG.parse(props);
        this.props = Map.copyOf(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return FailingSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        failIf("taskConfigs", props);
        return List.of(props);
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
    public String version() {
        return "1";
    }
}
