package io.github.sparkeosconnect.taskhost;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.storage.Converter;

/** Source tasks (and a converter) with scripted behaviour for the host's tests (found on the
 * host class path). */
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

    /** Two polls, records a0-a2 then b0-b1, then none; {@code BOTH_POLLED} opens once the
     * host's poll thread has the second poll's records (its next poll() has begun). */
    public static final class TwoPolls extends Base {
        static volatile CountDownLatch bothPolled = new CountDownLatch(1);
        private int polls;

        @Override
        public List<SourceRecord> poll() {
            polls++;
            if (polls == 1) {
                return List.of(record("a0", 0), record("a1", 1), record("a2", 2));
            }
            if (polls == 2) {
                return List.of(record("b0", 3), record("b1", 4));
            }
            bothPolled.countDown();
            return null;
        }
    }

    /** Every poll fails for good. */
    public static final class Failing extends Base {
        @Override
        public List<SourceRecord> poll() {
            throw new ConnectException("the source is gone");
        }
    }

    /** Its start throws. */
    public static final class FailingStart extends Base {
        @Override
        public void start(Map<String, String> props) {
            throw new IllegalStateException("cannot start");
        }

        @Override
        public List<SourceRecord> poll() {
            return null;
        }
    }

    /** A value converter that refuses the value "3" and writes any other as its text. */
    public static final class RefusingThree implements Converter {
        @Override
        public void configure(Map<String, ?> configs, boolean isKey) {
        }

        @Override
        public byte[] fromConnectData(String topic, Schema schema, Object value) {
            if ("3".equals(String.valueOf(value))) {
                throw new DataException("3 is refused");
            }
            return String.valueOf(value).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public SchemaAndValue toConnectData(String topic, byte[] value) {
            return SchemaAndValue.NULL;
        }
    }

    /**
     * Defines its transactions: its one poll returns records 0-5 having asked to commit on
     * record 1, abort on record 3 and commit after the batch; commits record 5 (the last of
     * the batch) both by itself and in the batch request; committed records are remembered.
     * Its context's TransactionContext is null without transaction.boundary=connector: then it
     * returns one record and asks nothing.
     */
    public static final class Transactional extends Base {
        static final List<Long> COMMITTED = new java.util.concurrent.CopyOnWriteArrayList<>();
        private boolean polled;

        @Override
        public List<SourceRecord> poll() {
            if (polled) {
                return null;
            }
            polled = true;
            org.apache.kafka.connect.source.TransactionContext transactions =
                    context.transactionContext();
            if (transactions == null) {
                return List.of(record("no context", 0));
            }
            List<SourceRecord> records = new java.util.ArrayList<>();
            for (long i = 0; i < 6; i++) {
                records.add(record("r" + i, i));
            }
            transactions.commitTransaction(records.get(1));
            transactions.abortTransaction(record("r3", 3)); // matched by equals, as Connect
            transactions.commitTransaction(records.get(5));
            transactions.commitTransaction();
            return records;
        }

        @Override
        public void commitRecord(SourceRecord record,
                org.apache.kafka.clients.producer.RecordMetadata metadata) {
            COMMITTED.add((Long) record.sourceOffset().get("position"));
        }
    }

    /**
     * Ends each poll's batch through its TransactionContext: polls 1-3 return one record each
     * and ask to commit, abort, commit their batch; poll 4 returns nothing but asks to commit,
     * poll 5 returns one record; then nothing.
     */
    public static final class BatchRequests extends Base {
        private int polls;

        @Override
        public List<SourceRecord> poll() {
            polls++;
            org.apache.kafka.connect.source.TransactionContext transactions =
                    context.transactionContext();
            switch (polls) {
                case 1, 3, 4 -> transactions.commitTransaction();
                case 2 -> transactions.abortTransaction();
                default -> {
                }
            }
            return polls <= 3 || polls == 5 ? List.of(record("p" + polls, polls)) : null;
        }
    }

    /** Asks to commit and abort the same record. */
    public static final class Conflicted extends Base {
        @Override
        public List<SourceRecord> poll() {
            SourceRecord one = record("both", 0);
            context.transactionContext().commitTransaction(one);
            context.transactionContext().abortTransaction(one);
            return List.of(one);
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
