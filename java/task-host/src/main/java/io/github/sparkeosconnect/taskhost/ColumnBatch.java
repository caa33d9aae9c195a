package io.github.sparkeosconnect.taskhost;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * One BATCH reply (layout in {@link TaskHostMain}), built a record at a time so that a record's
 * Java objects can go as soon as its bytes are in: the records to produce as columns, and the
 * last source offset of each source partition among all the records taken.
 */
final class ColumnBatch {

    private final long firstSeq;
    private final OffsetJson json;
    private int taken;
    private int n;
    private final Map<String, Integer> topicIds = new LinkedHashMap<>();
    private int[] topicOf = new int[64];
    private int[] positions = new int[64];
    private int[] partitions = new int[64];
    private long[] timestamps = new long[64];
    private int[] keyLengths = new int[64];
    private int[] valueLengths = new int[64];
    private final Blob keys = new Blob();
    private final Blob values = new Blob();
    private final List<Header[]> headers = new ArrayList<>();
    private boolean anyPartition;
    private boolean anyTimestamp;
    private boolean anyHeaders;
    private final LinkedHashMap<Map<String, ?>, Map<String, ?>> lastOffsets = new LinkedHashMap<>();
    private int requests;
    private boolean midPoll;

    /** A batch whose first record has sequence number {@code firstSeq}. */
    ColumnBatch(long firstSeq, OffsetJson json) {
        this.firstSeq = firstSeq;
        this.json = json;
    }

    /** Records taken so far. */
    int taken() {
        return taken;
    }

    /** The last offset of each source partition, in the order of those last records. */
    Map<Map<String, ?>, Map<String, ?>> lastOffsets() {
        return lastOffsets;
    }

    /** The task's transaction requests that end this batch ({@link HostedTransactionContext}):
     * {@code afterRecord} on its last record, then {@code afterPoll} for the batch of the
     * {@code poll()} whose last record it is; BATCH's flag 32 says there are some. */
    void endsTransaction(int afterRecord, int afterPoll) {
        requests = afterRecord | afterPoll << 2;
    }

    /** The batch stops inside a {@code poll()}: records of that poll wait in the host
     * (BATCH's flag 64). The Python side takes them before its transaction may commit. */
    void stopsMidPoll(boolean midPoll) {
        this.midPoll = midPoll;
    }

    /** What ends the transaction of this batch's records: the request on its last record,
     * else the one after its poll ({@link HostedTransactionContext}'s NONE, COMMIT, ABORT). */
    int ending() {
        return (requests & 3) != 0 ? requests & 3 : requests >> 2;
    }

    /** Adds a record the task returned; {@code sent} is what to produce (null: dropped). */
    void add(SourceRecord record, ProducerRecord<byte[], byte[]> sent) {
        taken++;
        Map<String, ?> partition = record.sourcePartition();
        if (partition != null) {
            lastOffsets.remove(partition);
            lastOffsets.put(partition, record.sourceOffset());
        }
        if (sent == null) {
            return;
        }
        if (n == topicOf.length) {
            int size = n * 2;
            topicOf = Arrays.copyOf(topicOf, size);
            positions = Arrays.copyOf(positions, size);
            partitions = Arrays.copyOf(partitions, size);
            timestamps = Arrays.copyOf(timestamps, size);
            keyLengths = Arrays.copyOf(keyLengths, size);
            valueLengths = Arrays.copyOf(valueLengths, size);
        }
        topicOf[n] = topicIds.computeIfAbsent(sent.topic(), t -> topicIds.size());
        positions[n] = taken - 1;
        partitions[n] = sent.partition() == null ? -1 : sent.partition();
        anyPartition |= sent.partition() != null;
        timestamps[n] = sent.timestamp() == null ? -1L : sent.timestamp();
        anyTimestamp |= sent.timestamp() != null;
        keyLengths[n] = keys.add(sent.key());
        valueLengths[n] = values.add(sent.value());
        Header[] own = sent.headers().toArray();
        headers.add(own);
        anyHeaders |= own.length > 0;
        n++;
    }

    /** The BATCH frame; {@code schemas}: the handed-over schemas numbered for it. */
    Wire.Out write(List<SchemaTable.Entry> schemas) {
        boolean dropped = n < taken;
        Wire.Out out = new Wire.Out(TaskHostMain.BATCH, 64 + n * 24 + keys.size + values.size);
        out.putLong(firstSeq).putInt(taken).putInt(n);
        out.putInt(topicIds.size());
        for (String topic : topicIds.keySet()) {
            out.putString(topic);
        }
        ints(out, topicOf);
        out.putInt((anyPartition ? 1 : 0) | (anyTimestamp ? 2 : 0) | (anyHeaders ? 4 : 0)
                | (dropped ? 8 : 0) | (schemas.isEmpty() ? 0 : 16) | (requests == 0 ? 0 : 32)
                | (midPoll ? 64 : 0));
        if (dropped) {
            ints(out, positions);
        }
        if (anyPartition) {
            ints(out, partitions);
        }
        if (anyTimestamp) {
            for (int i = 0; i < n; i++) {
                out.putLong(timestamps[i]);
            }
        }
        ints(out, keyLengths);
        out.putRaw(keys.data, 0, keys.size);
        ints(out, valueLengths);
        out.putRaw(values.data, 0, values.size);
        if (anyHeaders) {
            for (Header[] own : headers) {
                out.putInt(own.length);
                for (Header header : own) {
                    out.putString(header.key());
                    out.putBytes(header.value());
                }
            }
        }
        out.putInt(lastOffsets.size());
        for (Map.Entry<Map<String, ?>, Map<String, ?>> last : lastOffsets.entrySet()) {
            out.putString(json.write(last.getKey()));
            out.putString(json.write(last.getValue()));
        }
        if (!schemas.isEmpty()) {
            out.putInt(schemas.size());
            for (SchemaTable.Entry schema : schemas) {
                out.putInt(schema.id()).putString(schema.json());
            }
        }
        if (requests != 0) {
            out.putInt(requests);
        }
        return out;
    }

    private void ints(Wire.Out out, int[] values) {
        for (int i = 0; i < n; i++) {
            out.putInt(values[i]);
        }
    }

    /** Byte arrays one after another. */
    private static final class Blob {
        private byte[] data = new byte[4096];
        private int size;

        /** Appends {@code bytes}; their length, -1 for null. */
        int add(byte[] bytes) {
            if (bytes == null) {
                return -1;
            }
            if (size + bytes.length > data.length) {
                data = Arrays.copyOf(data, Math.max(data.length * 2, size + bytes.length));
            }
            System.arraycopy(bytes, 0, data, size, bytes.length);
            size += bytes.length;
            return bytes.length;
        }
    }
}
