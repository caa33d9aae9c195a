package io.github.sparkeosconnect.testplugins;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * The task of {@link FailingSourceConnector}: throws in {@code start} under
 * {@code fail.in=task.start}; otherwise one {@code poll()} returns the {@code values} it has
 * not written yet, value i (from 0) a string under {@link Schema#STRING_SCHEMA} with source
 * partition {@code {"topic": <topic>}} and source offset {@code {"position": i + 1}}; later
 * polls return nothing. It resumes after the committed position.
 */
public final class FailingSourceTask extends SourceTask {

    private static final long IDLE_MS = 50;

    private Map<String, String> partition;
    private String topic;
    private List<String> values;
    private long next;

    @Override
    public void start(Map<String, String> props) {
        FailingSourceConnector.failIf("task.start", props);
        AbstractConfig config = new AbstractConfig(FailingSourceConnector.CONFIG, props);
        topic = config.getString(FailingSourceConnector.TOPIC);
        values = config.getList(FailingSourceConnector.VALUES);
        partition = Map.of("topic", topic);
        Map<String, Object> committed = context.offsetStorageReader().offset(partition);
        next = committed == null ? 0 : ((Number) committed.get("position")).longValue();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        if (next >= values.size()) {
            Thread.sleep(IDLE_MS);
            return null;
        }
        List<SourceRecord> batch = new ArrayList<>();
        for (; next < values.size(); next++) {
            batch.add(new SourceRecord(partition, Map.of("position", next + 1), topic,
                    Schema.STRING_SCHEMA, values.get((int) next)));
        }
        return batch;
    }

    @Override
    public void stop() {
    }

    @Override
    public String version() {
        return "1";
    }
}
