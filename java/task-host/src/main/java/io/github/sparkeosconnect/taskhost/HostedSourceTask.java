package io.github.sparkeosconnect.taskhost;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Java {@link SourceTask} run as a Connect worker runs it, minus the producer: {@code poll}
 * on a thread of its own (a {@link RetriableException} is retried; a blocking poll never holds
 * up {@code stop}), its records converted by a {@link RecordPipeline} and handed out in batches
 * of sequence-numbered records; once the Python side says records up to a sequence number were
 * committed, {@code commitRecord} for each of them and then {@code commit()}, on the poll
 * thread between two polls (as Connect's exactly-once task calls them on its task thread).
 *
 * <p>With {@code transaction.boundary=connector} in the connector config, the task's context
 * has a {@link HostedTransactionContext}: a batch handed out ends at the first record the task
 * asked to commit or abort on, or at the end of a {@code poll()}'s records for which it asked,
 * and carries the request; the records of a transaction it aborts are forgotten here (no
 * {@code commitRecord}, their offsets never this task's). A batch request is read on the poll
 * thread as its {@code poll()} returns (that thread reads ahead); one made in a {@code poll()}
 * that returns no records applies at once, as on a Connect worker: the batch handed out next
 * ends with it, with no records of its own when none were waiting.
 */
public final class HostedSourceTask {

    private static final Logger log = LoggerFactory.getLogger(HostedSourceTask.class);
    private static final int BUFFERED_POLLS = 8;
    private static final long STOP_WAIT_MS = 5_000;

    /** What a record that went to Kafka needs for its {@code RecordMetadata}. */
    private record Sent(String topic, long timestamp, int keySize, int valueSize) {
    }

    /**
     * One batch handed out and not yet committed: its sequence numbers, the last offset of each
     * of its source partitions and, only for a task that overrides {@code commitRecord}, its
     * records (with what was sent of each, null for a dropped one).
     */
    private record Handed(long firstSeq, long lastSeq, Map<Map<String, ?>, Map<String, ?>> lastOffsets,
            List<SourceRecord> records, List<Sent> sent) {
    }

    private final Plugins plugins;
    private final String taskClass;
    private final Map<String, String> taskConfig;
    private final Map<String, String> connectorConfig;
    private final Set<String> standIns;
    private final OffsetJson json;
    private final HostedOffsetReader reader;
    /** The records of one {@code poll()} and the request the task made for their batch. */
    private record Polled(List<SourceRecord> records, int afterPoll) {
    }

    private final LinkedBlockingQueue<Polled> polled =
            new LinkedBlockingQueue<>(BUFFERED_POLLS);
    private final ConcurrentLinkedQueue<Runnable> commits = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Handed> handed = new ArrayDeque<>();
    private final HostedTransactionContext transactions;
    private SourceTask task;
    private ClassLoader loader;
    private RecordPipeline pipeline;
    private Metrics metrics;
    private Thread pollThread;
    private volatile boolean stopping;
    private volatile Throwable failure;
    private final java.util.concurrent.atomic.AtomicLong emptyPolls =
            new java.util.concurrent.atomic.AtomicLong();
    private boolean wantsMetadata;
    private List<SourceRecord> leftover = Collections.emptyList();
    private int leftoverAt;
    private int leftoverAfterPoll;
    private long nextSeq;
    private long commitRequestedThrough = -1;

    /** A task of {@code taskClass} (found in {@code plugins}) with its task config and its
     * connector's options (converters, transforms, errors.tolerance); {@code standIns}: the
     * converter classes the Python side converts itself ({@link RecordPipeline}). */
    public HostedSourceTask(Plugins plugins, String taskClass, Map<String, String> taskConfig,
            Map<String, String> connectorConfig, Set<String> standIns, OffsetJson json,
            HostedOffsetReader.Lookup lookup) {
        this.plugins = plugins;
        this.taskClass = taskClass;
        this.taskConfig = Map.copyOf(taskConfig);
        this.connectorConfig = Map.copyOf(connectorConfig);
        this.standIns = Set.copyOf(standIns);
        this.json = json;
        this.reader = new HostedOffsetReader(json, lookup);
        this.transactions = "connector".equalsIgnoreCase(
                connectorConfig.getOrDefault("transaction.boundary", "").trim())
                ? new HostedTransactionContext() : null;
    }

    /** Loads, initializes and starts the task, then its poll thread; a task whose start
     * throws has its pipeline closed. */
    public void start() throws Exception {
        Plugins.Found<SourceTask> found = plugins.load(taskClass, SourceTask.class, null);
        loader = found.loader();
        task = Plugins.withLoader(loader, () -> found.type().getDeclaredConstructor().newInstance());
        wantsMetadata = found.type().getMethod("commitRecord", SourceRecord.class,
                RecordMetadata.class).getDeclaringClass() != SourceTask.class;
        pipeline = RecordPipeline.create(plugins, connectorConfig, loader, standIns);
        metrics = new Metrics();
        PluginMetrics pluginMetrics = new PluginMetricsImpl(metrics, Map.of("task", taskClass));
        SourceTaskContext context = new SourceTaskContext() {
            @Override
            public Map<String, String> configs() {
                return taskConfig;
            }

            @Override
            public OffsetStorageReader offsetStorageReader() {
                return reader;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return pluginMetrics;
            }

            @Override
            public TransactionContext transactionContext() {
                return transactions;
            }
        };
        try {
            Plugins.runWithLoader(loader, () -> {
                task.initialize(context);
                task.start(taskConfig);
            });
        } catch (Throwable failed) { // not started: its stop() is not called, as in Connect
            pipeline.close();
            metrics.close();
            throw failed;
        }
        pollThread = new Thread(this::pollLoop, "poll-" + taskClass);
        pollThread.setDaemon(true);
        pollThread.setContextClassLoader(loader);
        pollThread.start();
    }

    /** Whether the task overrides {@code commitRecord}: only then does it need each record's
     * Kafka metadata. */
    public boolean wantsMetadata() {
        return wantsMetadata;
    }

    /** START_TASK's reply flags: 1 the task overrides commitRecord, 2 its keys and 4 its
     * values are handed over to the Python side's converter. */
    public int startFlags() {
        return (wantsMetadata ? 1 : 0) | pipeline.handOverFlags();
    }

    private void pollLoop() {
        try {
            while (!stopping) {
                runCommits();
                List<SourceRecord> records;
                try {
                    records = task.poll();
                } catch (RetriableException retriable) {
                    log.info("{}.poll() failed and is retried: {}", taskClass, retriable.toString());
                    continue;
                }
                int request = transactions == null ? HostedTransactionContext.NONE
                        : transactions.afterBatch(); // here: the poll thread reads ahead
                boolean empty = records == null || records.isEmpty();
                if (empty && request == HostedTransactionContext.NONE) {
                    emptyPolls.incrementAndGet();
                    continue;
                }
                // an empty poll's request applies at once, as a Connect worker applies it
                Polled batch = new Polled(empty ? List.of() : records, request);
                while (!stopping && !polled.offer(batch, 100, TimeUnit.MILLISECONDS)) {
                    runCommits();
                }
                if (empty) {
                    emptyPolls.incrementAndGet();
                }
            }
        } catch (InterruptedException interrupted) {
            if (!stopping) {
                failure = interrupted;
            }
        } catch (Throwable error) {
            if (!stopping) {
                failure = error;
            }
        }
    }

    private void runCommits() {
        Runnable commit;
        while ((commit = commits.poll()) != null) {
            commit.run();
        }
    }

    /**
     * Up to {@code max} records as a BATCH reply: waits up to {@code waitMs} for the first,
     * then takes only what is already polled. A {@code poll()} of the task that returns nothing
     * meanwhile ends the wait (an empty batch: the source has nothing now), as an empty poll
     * ends a Python task's micro-batch. Fails with the task's error once its polled records
     * are all handed out. With {@code restOfPoll} only the records left of the {@code poll()}
     * the last batch stopped in are taken. A batch that stops inside a {@code poll()} says so
     * (flag 64): one poll's records are never split between two transactions, since records
     * of one source position (Debezium's delete, tombstone and create of a key change) share
     * its offset.
     */
    public Wire.Out poll(int max, long waitMs, boolean restOfPoll) throws Exception {
        ColumnBatch batch = new ColumnBatch(nextSeq, json);
        long emptyBefore = emptyPolls.get();
        List<SourceRecord> records = wantsMetadata ? new ArrayList<>() : null;
        List<Sent> sent = wantsMetadata ? new ArrayList<>() : null;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        Plugins.runWithLoader(loader, () -> {
            while (batch.taken() < max) {
                if (leftoverAt < leftover.size()) {
                    SourceRecord record = leftover.get(leftoverAt);
                    leftover.set(leftoverAt++, null); // its bytes are all the batch keeps
                    ProducerRecord<byte[], byte[]> converted = pipeline.apply(record);
                    batch.add(record, converted);
                    if (records != null) {
                        records.add(record);
                        sent.add(converted == null ? null : new Sent(converted.topic(),
                                converted.timestamp() == null ? -1L : converted.timestamp(),
                                converted.key() == null ? -1 : converted.key().length,
                                converted.value() == null ? -1 : converted.value().length));
                    }
                    if (transactions != null && endsTransaction(batch, record)) {
                        break;
                    }
                    continue;
                }
                if (restOfPoll) {
                    break;
                }
                Polled next;
                if (batch.taken() == 0) {
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0 || polled.isEmpty()
                            && (failure != null || emptyPolls.get() > emptyBefore)) {
                        break;
                    }
                    next = polled.poll(Math.min(remaining, TimeUnit.MILLISECONDS.toNanos(50)),
                            TimeUnit.NANOSECONDS);
                } else {
                    next = polled.poll();
                    if (next == null) {
                        break;
                    }
                }
                if (next != null) {
                    leftover = new ArrayList<>(next.records());
                    leftoverAt = 0;
                    leftoverAfterPoll = next.afterPoll();
                    if (leftover.isEmpty()) { // an empty poll's request ends the batch here
                        batch.endsTransaction(HostedTransactionContext.NONE, leftoverAfterPoll);
                        break;
                    }
                }
            }
        });
        batch.stopsMidPoll(leftoverAt < leftover.size());
        if (batch.taken() == 0 && failure != null) {
            throw new TaskFailedException(taskClass + ".poll() failed", failure);
        }
        if (batch.taken() > 0) {
            handed.add(new Handed(nextSeq, nextSeq + batch.taken() - 1, batch.lastOffsets(),
                    records, sent));
            nextSeq += batch.taken();
        }
        long lastSeq = nextSeq - 1; // the last record handed out, this batch's or an earlier one
        if (batch.ending() == HostedTransactionContext.COMMIT) {
            commitRequestedThrough = lastSeq;
        } else if (batch.ending() == HostedTransactionContext.ABORT) {
            while (!handed.isEmpty() && handed.peekLast().firstSeq() > commitRequestedThrough) {
                handed.pollLast(); // aborted: never committed, never this task's offsets
            }
        }
        return batch.write(pipeline.newSchemas());
    }

    /** Whether the task's transaction requests end {@code batch} at {@code record}, the last
     * added: one on the record, or one for its poll's batch when it is that batch's last. */
    private boolean endsTransaction(ColumnBatch batch, SourceRecord record) {
        int afterRecord = transactions.after(record);
        int afterPoll = leftoverAt == leftover.size() ? leftoverAfterPoll
                : HostedTransactionContext.NONE;
        if (afterRecord == HostedTransactionContext.NONE
                && afterPoll == HostedTransactionContext.NONE) {
            return false;
        }
        batch.endsTransaction(afterRecord, afterPoll);
        return true;
    }

    /**
     * The records up to {@code throughSeq} (the end of a batch) are committed in Kafka:
     * {@code metadata} maps the sequence numbers of those sent to {partition, offset} (empty
     * unless {@link #wantsMetadata()}). Their offsets become this task's for its offset reader
     * at once; {@code commitRecord} (only for a task that overrides it: the default does
     * nothing) and {@code commit()} run on the poll thread before its next poll.
     */
    public void committed(long throughSeq, Map<Long, long[]> metadata) {
        List<SourceRecord> records = new ArrayList<>();
        List<RecordMetadata> metas = new ArrayList<>();
        while (!handed.isEmpty() && handed.peekFirst().lastSeq() <= throughSeq) {
            Handed done = handed.pollFirst();
            for (Map.Entry<Map<String, ?>, Map<String, ?>> last : done.lastOffsets().entrySet()) {
                reader.committed(last.getKey(), last.getValue());
            }
            if (done.records() == null) {
                continue;
            }
            for (int i = 0; i < done.records().size(); i++) {
                records.add(done.records().get(i));
                Sent one = done.sent().get(i);
                long[] where = metadata.get(done.firstSeq() + i);
                metas.add(one == null ? null : new RecordMetadata(
                        new TopicPartition(one.topic(), where == null ? -1 : (int) where[0]),
                        where == null ? -1L : where[1], 0, one.timestamp(), one.keySize(),
                        one.valueSize()));
            }
        }
        commits.add(() -> {
            for (int i = 0; i < records.size(); i++) {
                try {
                    task.commitRecord(records.get(i), metas.get(i));
                } catch (Throwable error) {
                    log.error("{}.commitRecord() failed", taskClass, error);
                }
            }
            try {
                task.commit();
            } catch (Throwable error) {
                log.error("{}.commit() failed", taskClass, error);
            }
        });
    }

    /** Stops the task from this thread (a blocked poll is not waited on for long), then runs
     * the commit hooks still queued and closes the pipeline. */
    public void stop() throws Exception {
        stopping = true;
        try {
            Plugins.runWithLoader(loader, task::stop);
        } finally {
            pollThread.join(STOP_WAIT_MS);
            if (pollThread.isAlive()) {
                log.warn("{}.poll() did not return within {} ms of stop(); interrupting it",
                        taskClass, STOP_WAIT_MS);
                pollThread.interrupt();
            } else {
                Plugins.runWithLoader(loader, this::runCommits);
            }
            pipeline.close();
            metrics.close();
        }
    }

    /** The task failed: its own error is the cause. */
    public static final class TaskFailedException extends Exception {
        private static final long serialVersionUID = 1L;

        TaskFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
