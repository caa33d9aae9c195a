package io.github.sparkeosconnect.taskhost;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/** Source tasks with scripted behaviour for the host's tests (found on the host class path). */
final class ScriptedTasks {

    private ScriptedTasks() {
    }

    static SourceRecord record(String value, long position) {
        return new SourceRecord(Map.of("stream", "s"), Map.of("position", position), "t",
                Schema.STRING_SCHEMA, value);
    }

    /** Abstract boilerplate. */
    abstract static class Base extends SourceTask {
        @Override
        public String version() {
            return "test";
        }

        @Override
        public void start(Map<String, String> props) {
        }

        @Override
        public void stop() {
        }
    }

    /** First poll throws a RetriableException, the second returns one record, then none. */
    public static final class Flaky extends Base {
        private int polls;

        @Override
        public List<SourceRecord> poll() {
            polls++;
            if (polls == 1) {
                throw new RetriableException("not yet");
            }
            return polls == 2 ? List.of(record("after a retry", 1)) : null;
        }
    }

    /** Every poll fails for good. */
    public static final class Failing extends Base {
        @Override
        public List<SourceRecord> poll() {
            throw new ConnectException("the source is gone");
        }
    }

    /** poll() blocks until stop() is called (from another thread), as a blocking poll does. */
    public static final class Blocking extends Base {
        private final CountDownLatch stopped = new CountDownLatch(1);

        @Override
        public List<SourceRecord> poll() throws InterruptedException {
            stopped.await();
            return null;
        }

        @Override
        public void stop() {
            stopped.countDown();
        }
    }
}
