package io.github.sparkeosconnect.taskhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** errors.retry.timeout, errors.retry.delay.max.ms and errors.log.* as a Connect worker applies
 * them to a source record's stages; the waits recorded on a clock of the test's own. */
class ErrorHandlingTest {

    @TempDir
    Path root;

    long now = 1_000_000;
    final List<Long> waits = new ArrayList<>();

    ErrorHandling handling(Map<String, String> config) {
        return ErrorHandling.of(config, () -> now, millis -> {
            waits.add(millis);
            now += millis;
        });
    }

    /** Throws RetriableException {@code failures} times, then answers "done". */
    static Callable<String> failing(int failures, List<Integer> tries) {
        return () -> {
            tries.add(tries.size() + 1);
            if (tries.size() <= failures) {
                throw new RetriableException("not yet (try " + tries.size() + ")");
            }
            return "done";
        };
    }

    @Test
    void aRetriableFailureIsTriedAgainWaitingLongerEachTime() throws Exception {
        List<Integer> tries = new ArrayList<>();
        ErrorHandling errors = handling(Map.of("errors.retry.timeout", "60000"));

        assertEquals("done", errors.withRetries(failing(3, tries)));

        assertEquals(4, tries.size());
        assertEquals(List.of(300L, 600L, 1200L), waits);
    }

    @Test
    void noRetriesByDefaultAndNoneForOtherExceptions() {
        List<Integer> tries = new ArrayList<>();
        assertThrows(RetriableException.class,
                () -> handling(Map.of()).withRetries(failing(1, tries)));
        assertEquals(1, tries.size(), "errors.retry.timeout=0: one try");

        List<Integer> others = new ArrayList<>();
        assertThrows(DataException.class, () -> handling(Map.of("errors.retry.timeout", "-1"))
                .withRetries(() -> {
                    others.add(1);
                    throw new DataException("bad data is not retried");
                }));
        assertEquals(1, others.size());
        assertEquals(List.of(), waits);
    }

    @Test
    void theRetriesEndAtTheTimeoutTheLastWaitCutToIt() {
        List<Integer> tries = new ArrayList<>();
        ErrorHandling errors = handling(Map.of("errors.retry.timeout", "1000"));

        assertThrows(RetriableException.class, () -> errors.withRetries(failing(10, tries)));

        assertEquals(List.of(300L, 600L, 100L), waits, "the third wait ends at the deadline");
        assertEquals(4, tries.size());
    }

    @Test
    void pastTheMaximumDelayEachWaitIsRandomBelowIt() {
        ErrorHandling errors = handling(Map.of("errors.retry.timeout", "-1",
                "errors.retry.delay.max.ms", "1000"));

        assertEquals(600L, errors.delayMs(2, Long.MAX_VALUE));
        for (int attempt = 3; attempt < 50; attempt++) {
            long delay = errors.delayMs(attempt, Long.MAX_VALUE);
            assertTrue(delay >= 0 && delay < 1000, "try " + attempt + ": " + delay);
        }
    }

    @Test
    void aSkippedRecordIsLoggedOnlyUnderErrorsLogEnableItselfOnlyWithIncludeMessages() {
        DataException error = new DataException("no");
        assertNull(handling(Map.of()).skipLine("stage X failed", "the-record", error));
        String named = handling(Map.of("errors.log.enable", "true"))
                .skipLine("stage X failed", "the-record", error);
        assertEquals("errors.tolerance=all: the record is skipped: stage X failed: "
                + "org.apache.kafka.connect.errors.DataException: no", named);
        String whole = handling(Map.of("errors.log.enable", "true",
                "errors.log.include.messages", "true"))
                .skipLine("stage X failed", "the-record", error);
        assertTrue(whole.contains(", where source record is = the-record: "), whole);
    }

    /** Fails each record's first two tries with RetriableException, then upper-cases it. */
    public static final class FlakyUpperCase implements Transformation<SourceRecord> {
        static final List<Object> TRIES = new ArrayList<>();

        @Override
        public SourceRecord apply(SourceRecord record) {
            TRIES.add(record.value());
            if (TRIES.stream().filter(record.value()::equals).count() <= 2) {
                throw new RetriableException("the service is busy");
            }
            return record.newRecord(record.topic(), null, null, null, null,
                    String.valueOf(record.value()).toUpperCase(), record.timestamp());
        }

        @Override
        public ConfigDef config() {
            return new ConfigDef();
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }

        @Override
        public void close() {
        }
    }

    SourceRecord record(String value) {
        return new SourceRecord(Map.of("file", "f"), Map.of("position", 1L), "lines", null,
                Schema.STRING_SCHEMA, value);
    }

    @Test
    void aTransformIsTriedAgainAloneAndTheRecordGoesOn() throws Exception {
        Map<String, String> config = Map.of("transforms", "upper",
                "transforms.upper.type", FlakyUpperCase.class.getName(),
                "value.converter", "org.apache.kafka.connect.storage.StringConverter");
        Plugins plugins = new Plugins(List.of(root), ErrorHandlingTest.class.getClassLoader());
        FlakyUpperCase.TRIES.clear();

        Map<String, String> retried = new HashMap<>(config);
        retried.put("errors.retry.timeout", "10000");
        try (RecordPipeline pipeline = RecordPipeline.create(plugins, retried,
                ErrorHandlingTest.class.getClassLoader(), Set.of(), handling(retried))) {
            ProducerRecord<byte[], byte[]> sent = pipeline.apply(record("a"));
            assertEquals("A", new String(sent.value()));
        }
        assertEquals(List.of("a", "a", "a"), FlakyUpperCase.TRIES);
        assertEquals(List.of(300L, 600L), waits);

        FlakyUpperCase.TRIES.clear();
        try (RecordPipeline pipeline = RecordPipeline.create(plugins, config,
                ErrorHandlingTest.class.getClassLoader(), Set.of(), handling(config))) {
            ConnectException failed = assertThrows(ConnectException.class,
                    () -> pipeline.apply(record("b")));
            assertTrue(failed.getMessage().contains("(transforms.upper)"), failed.getMessage());
            assertTrue(failed.getCause() instanceof RetriableException);
        }
        assertEquals(List.of("b"), FlakyUpperCase.TRIES, "errors.retry.timeout=0: one try");
    }
}
