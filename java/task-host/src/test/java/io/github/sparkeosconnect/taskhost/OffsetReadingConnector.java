package io.github.sparkeosconnect.taskhost;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.connector.Task;

/** A connector whose task config says what its context's offset reader answered for the
 * source partition {@code {"file": <its option file>}}, and the type of its
 * {@code position}. */
public final class OffsetReadingConnector extends TestSourceConnector {

    private String file;

    @Override
    public void start(Map<String, String> props) {
        file = props.get("file");
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ScriptedTasks.Flaky.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        Map<String, Object> offset = context().offsetStorageReader().offset(Map.of("file", file));
        Object position = offset == null ? null : offset.get("position");
        return List.of(Map.of("seen", String.valueOf(offset),
                "type", position == null ? "none" : position.getClass().getSimpleName()));
    }
}
