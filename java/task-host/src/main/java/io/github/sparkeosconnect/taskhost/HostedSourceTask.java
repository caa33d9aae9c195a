package io.github.sparkeosconnect.taskhost;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
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
 */
public final class HostedSourceTask {

    private static final Logger log = LoggerFactory.getLogger(HostedSourceTask.class);
    private static final int BUFFERED_POLLS = 8;
    private static final long STOP_WAIT_MS = 5_000;

    /** A record handed out and not yet committed. */
    private record Pending(long seq, SourceRecord record, ProducerRecord<byte[], byte[]> sent) {
    }

    private final Plugins plugins;
    private final String taskClass;
    private final Map<String, String> taskConfig;
    private final Map<String, String> connectorConfig;
    private final OffsetJson json;
    private final HostedOffsetReader reader;
    private final LinkedBlockingQueue<List<SourceRecord>> polled =
            new LinkedBlockingQueue<>(BUFFERED_POLLS);
    private final ConcurrentLinkedQueue<Runnable> commits = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private SourceTask task;
    private ClassLoader loader;
    private RecordPipeline pipeline;
    private Metrics metrics;
    private Thread pollThread;
    private volatile boolean stopping;
    private volatile Throwable failure;
    private boolean wantsMetadata;
    private List<SourceRecord> leftover = Collections.emptyList();
    private int leftoverAt;
    private long nextSeq;

    /** A task of {@code taskClass} (found in {@code plugins}) with its task config and its
     * connector's options (converters, transforms, errors.tolerance). */
    public HostedSourceTask(Plugins plugins, String taskClass, Map<String, String> taskConfig,
            Map<String, String> connectorConfig, OffsetJson json, HostedOffsetReader.Lookup lookup) {
        this.plugins = plugins;
        this.taskClass = taskClass;
        this.taskConfig = Map.copyOf(taskConfig);
        this.connectorConfig = Map.copyOf(connectorConfig);
        this.json = json;
        this.reader = new HostedOffsetReader(json, lookup);
    }

    /** Loads, initializes and starts the task, then its poll thread. */
    public void start() throws Exception {
        Plugins.Found<SourceTask> found = plugins.load(taskClass, SourceTask.class, null);
        loader = found.loader();
        task = Plugins.withLoader(loader, () -> found.type().getDeclaredConstructor().newInstance());
        wantsMetadata = found.type().getMethod("commitRecord", SourceRecord.class,
                RecordMetadata.class).getDeclaringClass() != SourceTask.class;
        pipeline = RecordPipeline.create(plugins, connectorConfig, loader);
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
        };
        Plugins.runWithLoader(loader, () -> {
            task.initialize(context);
            task.start(taskConfig);
        });
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
                if (records == null || records.isEmpty()) {
                    continue;
                }
                while (!stopping && !polled.offer(records, 100, TimeUnit.MILLISECONDS)) {
                    runCommits();
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
     * then takes only what is already polled. Fails with the task's error once its polled
     * records are all handed out.
     */
    public Wire.Out poll(int max, long waitMs) throws Exception {
        List<SourceRecord> taken = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (taken.size() < max) {
            if (leftoverAt < leftover.size()) {
                int end = Math.min(leftover.size(), leftoverAt + max - taken.size());
                taken.addAll(leftover.subList(leftoverAt, end));
                leftoverAt = end;
                continue;
            }
            List<SourceRecord> next;
            if (taken.isEmpty()) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 || failure != null && polled.isEmpty()) {
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
                leftover = next;
                leftoverAt = 0;
            }
        }
        if (taken.isEmpty() && failure != null) {
            throw new TaskFailedException(taskClass + ".poll() failed", failure);
        }
        List<ProducerRecord<byte[], byte[]>> converted = new ArrayList<>(taken.size());
        Plugins.runWithLoader(loader, () -> {
            for (SourceRecord record : taken) {
                converted.add(pipeline.apply(record));
            }
        });
        long first = nextSeq;
        for (int i = 0; i < taken.size(); i++) {
            pending.add(new Pending(nextSeq++, taken.get(i), converted.get(i)));
        }
        return ColumnBatch.write(first, taken, converted, json);
    }

    /**
     * The records up to {@code throughSeq} are committed in Kafka: {@code metadata} maps the
     * sequence numbers of those sent to {partition, offset} (empty unless {@link
     * #wantsMetadata()}). Their offsets become this task's for its offset reader at once;
     * {@code commitRecord} and {@code commit()} run on the poll thread before its next poll.
     */
    public void committed(long throughSeq, Map<Long, long[]> metadata) {
        List<SourceRecord> records = new ArrayList<>();
        List<RecordMetadata> metas = new ArrayList<>();
        while (!pending.isEmpty() && pending.peekFirst().seq() <= throughSeq) {
            Pending done = pending.pollFirst();
            records.add(done.record());
            long[] where = metadata.get(done.seq());
            ProducerRecord<byte[], byte[]> sent = done.sent();
            metas.add(sent == null ? null : new RecordMetadata(
                    new TopicPartition(sent.topic(), where == null ? -1 : (int) where[0]),
                    where == null ? -1L : where[1], 0,
                    sent.timestamp() == null ? -1L : sent.timestamp(),
                    sent.key() == null ? -1 : sent.key().length,
                    sent.value() == null ? -1 : sent.value().length));
            if (done.record().sourcePartition() != null) {
                reader.committed(done.record().sourcePartition(), done.record().sourceOffset());
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
