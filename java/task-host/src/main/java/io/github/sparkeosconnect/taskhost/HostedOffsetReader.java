package io.github.sparkeosconnect.taskhost;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * A hosted task's {@link OffsetStorageReader}: the offsets this task committed since it started
 * (kept here), else what the Python side answers from the offsets committed in Kafka. Either
 * way the values have Connect's JSON types ({@link OffsetJson}).
 */
public final class HostedOffsetReader implements OffsetStorageReader {

    /** Asks the Python side for the committed offsets of source partitions (JSON texts). */
    @FunctionalInterface
    public interface Lookup {
        /** One offset JSON (null: none) per partition JSON, in order. */
        List<String> offsets(List<String> partitions) throws IOException;
    }

    private final OffsetJson json;
    private final Lookup lookup;
    private final Map<Map<String, ?>, Map<String, Object>> committed = new HashMap<>();

    /** A reader asking {@code lookup} for what this task did not commit itself. */
    public HostedOffsetReader(OffsetJson json, Lookup lookup) {
        this.json = json;
        this.lookup = lookup;
    }

    /** This task committed {@code offset} for {@code partition} (null: a reset). */
    public void committed(Map<String, ?> partition, Map<String, ?> offset) {
        Map<String, Object> normal = json.read(json.write(offset));
        synchronized (committed) {
            committed.put(partition, normal);
        }
    }

    @Override
    public <T> Map<String, Object> offset(Map<String, T> partition) {
        return offsets(List.of(partition)).get(partition);
    }

    @Override
    public <T> Map<Map<String, T>, Map<String, Object>> offsets(
            Collection<Map<String, T>> partitions) {
        Map<Map<String, T>, Map<String, Object>> found = new HashMap<>();
        List<Map<String, T>> asked = new ArrayList<>();
        synchronized (committed) {
            for (Map<String, T> partition : partitions) {
                if (committed.containsKey(partition)) {
                    found.put(partition, committed.get(partition));
                } else {
                    asked.add(partition);
                }
            }
        }
        if (asked.isEmpty()) {
            return found;
        }
        List<String> texts = new ArrayList<>(asked.size());
        for (Map<String, T> partition : asked) {
            texts.add(json.write(partition));
        }
        List<String> answers;
        try {
            answers = lookup.offsets(texts);
        } catch (IOException error) {
            throw new ConnectException("could not read committed offsets: " + error.getMessage(),
                    error);
        }
        for (int i = 0; i < asked.size(); i++) {
            found.put(asked.get(i), json.read(answers.get(i)));
        }
        return found;
    }
}
