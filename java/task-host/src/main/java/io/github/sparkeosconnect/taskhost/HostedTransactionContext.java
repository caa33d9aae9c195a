package io.github.sparkeosconnect.taskhost;

import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * A hosted task's {@link TransactionContext} ({@code transaction.boundary=connector}), as a
 * Connect worker's: the task asks to commit or abort after a record or after the batch its
 * {@code poll()} returns; the host asks, record by record as it hands them out, whether one
 * ends a transaction, and as each {@code poll()} returns whether its batch does.
 * Records match by {@code equals}, as in Connect. Asking for both a commit and an abort of the
 * same record or batch fails the task when the host asks (the task could swallow it
 * otherwise). Thread-safe: a task may call it from threads of its own.
 */
final class HostedTransactionContext implements TransactionContext {

    /** What ends the transaction after a record or a batch, as BATCH's request bits count. */
    static final int NONE = 0;
    static final int COMMIT = 1;
    static final int ABORT = 2;

    private final Set<SourceRecord> commits = new HashSet<>();
    private final Set<SourceRecord> aborts = new HashSet<>();
    private boolean commitBatch;
    private boolean abortBatch;

    @Override
    public synchronized void commitTransaction() {
        commitBatch = true;
    }

    @Override
    public synchronized void commitTransaction(SourceRecord record) {
        commits.add(record);
    }

    @Override
    public synchronized void abortTransaction() {
        abortBatch = true;
    }

    @Override
    public synchronized void abortTransaction(SourceRecord record) {
        aborts.add(record);
    }

    /** Whether the transaction ends once {@code record} is handed out: NONE, COMMIT or ABORT
     * (the request is consumed). */
    synchronized int after(SourceRecord record) {
        if (commits.isEmpty() && aborts.isEmpty()) {
            return NONE;
        }
        boolean commit = commits.remove(record);
        boolean abort = aborts.remove(record);
        if (commit && abort) {
            throw new IllegalStateException(
                    "the task requested both commit and abort of the transaction ending with "
                            + "its record for topic " + record.topic());
        }
        return abort ? ABORT : commit ? COMMIT : NONE;
    }

    /** Whether the transaction ends after the batch of one {@code poll()}: NONE, COMMIT or
     * ABORT (the request is consumed). */
    synchronized int afterBatch() {
        boolean commit = commitBatch;
        boolean abort = abortBatch;
        commitBatch = false;
        abortBatch = false;
        if (commit && abort) {
            throw new IllegalStateException(
                    "the task requested both commit and abort of the same transaction");
        }
        return abort ? ABORT : commit ? COMMIT : NONE;
    }
}
