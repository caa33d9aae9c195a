package io.github.sparkeosconnect.testplugins;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * The task of {@link ScriptedTransactionsSourceConnector}. Record n's value is its number as a
 * string, its source partition {@code {"topic": <topic>}}, its source offset {@code
 * {"position": n + 1}} (a {@code Long}). Transaction k holds records {@code k * size} to
 * {@code (k + 1) * size - 1}; the task ends it on its last record, through its
 * TransactionContext: by the record for even k, for the poll's batch for odd k, aborting when
 * {@code (k + 1) % abort.every == 0}, else committing. It resumes from the committed position
 * and fails unless that is exactly {@code {"position": Long}}: Connect's JSON types.
 */
public final class ScriptedTransactionsSourceTask extends SourceTask {

    private static final long IDLE_MS = 50;

    private Map<String, String> partition;
    private String topic;
    private long records;
    private int size;
    private int abortEvery;
    private int pollSize;
    private long next;
    private TransactionContext transactions;

    @Override
    public void start(Map<String, String> props) {
        AbstractConfig config = new AbstractConfig(ScriptedTransactionsSourceConnector.CONFIG,
                props);
        topic = config.getString(ScriptedTransactionsSourceConnector.TOPIC);
        records = config.getLong(ScriptedTransactionsSourceConnector.RECORDS);
        size = config.getInt(ScriptedTransactionsSourceConnector.TRANSACTION_SIZE);
        abortEvery = config.getInt(ScriptedTransactionsSourceConnector.ABORT_EVERY);
        int asked = config.getInt(ScriptedTransactionsSourceConnector.POLL_SIZE);
        pollSize = asked == 0 ? size : asked;
        transactions = context.transactionContext();
        if (transactions == null) {
            throw new ConnectException("this task defines its transactions: it needs "
                    + "transaction.boundary=connector (its context has no TransactionContext)");
        }
        partition = Map.of("topic", topic);
        next = resumeAt(context.offsetStorageReader().offset(partition));
    }

    /** The position an offset read back holds; fails unless it is {"position": Long}. */
    static long resumeAt(Map<String, Object> offset) {
        if (offset == null) {
            return 0;
        }
        Object position = offset.get("position");
        if (offset.size() != 1 || !(position instanceof Long)) {
            throw new ConnectException("committed offset " + offset + " is not {\"position\": "
                    + "Long}: position is a "
                    + (position == null ? "null" : position.getClass().getName()));
        }
        return (Long) position;
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        if (next >= records) {
            Thread.sleep(IDLE_MS);
            return null;
        }
        long transaction = next / size;
        long end = Math.min((transaction + 1) * size, records);
        List<SourceRecord> batch = new ArrayList<>();
        for (long n = next; n < end && batch.size() < pollSize; n++) {
            batch.add(new SourceRecord(partition, Map.of("position", n + 1), topic,
                    Schema.STRING_SCHEMA, Long.toString(n)));
        }
        next += batch.size();
        if (next == end) {
            endTransaction(transaction, batch.get(batch.size() - 1));
        }
        return batch;
    }

    private void endTransaction(long transaction, SourceRecord last) {
        boolean abort = abortEvery > 0 && (transaction + 1) % abortEvery == 0;
        boolean byRecord = transaction % 2 == 0;
        if (abort && byRecord) {
            transactions.abortTransaction(last);
        } else if (abort) {
            transactions.abortTransaction();
        } else if (byRecord) {
            transactions.commitTransaction(last);
        } else {
            transactions.commitTransaction();
        }
    }

    @Override
    public void stop() {
    }

    @Override
    public String version() {
        return "1";
    }
}
