package io.github.sparkeosconnect.taskhost;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Writes one BATCH reply (layout in {@link TaskHostMain}): the records to produce as columns,
 * and the last source offset of each source partition among all the records taken.
 */
final class ColumnBatch {

    private ColumnBatch() {
    }

    /**
     * The reply for records {@code firstSeq}.. of {@code taken}; {@code converted} holds, per
     * taken record, what to produce (null: dropped).
     */
    static Wire.Out write(long firstSeq, List<SourceRecord> taken,
            List<ProducerRecord<byte[], byte[]>> converted, OffsetJson json) {
        List<ProducerRecord<byte[], byte[]>> sent = new ArrayList<>(converted.size());
        int[] index = new int[converted.size()];
        boolean partitions = false;
        boolean timestamps = false;
        boolean headers = false;
        for (int i = 0; i < converted.size(); i++) {
            ProducerRecord<byte[], byte[]> record = converted.get(i);
            if (record == null) {
                continue;
            }
            index[sent.size()] = i;
            sent.add(record);
            partitions |= record.partition() != null;
            timestamps |= record.timestamp() != null;
            headers |= record.headers().iterator().hasNext();
        }
        int n = sent.size();
        boolean dropped = n < taken.size();
        Wire.Out out = new Wire.Out(TaskHostMain.BATCH);
        out.putLong(firstSeq).putInt(taken.size()).putInt(n);
        Map<String, Integer> topicIds = new LinkedHashMap<>();
        int[] topicOf = new int[n];
        for (int i = 0; i < n; i++) {
            topicOf[i] = topicIds.computeIfAbsent(sent.get(i).topic(), t -> topicIds.size());
        }
        out.putInt(topicIds.size());
        for (String topic : topicIds.keySet()) {
            out.putString(topic);
        }
        for (int i = 0; i < n; i++) {
            out.putInt(topicOf[i]);
        }
        out.putInt((partitions ? 1 : 0) | (timestamps ? 2 : 0) | (headers ? 4 : 0)
                | (dropped ? 8 : 0));
        if (dropped) {
            for (int i = 0; i < n; i++) {
                out.putInt(index[i]);
            }
        }
        if (partitions) {
            for (ProducerRecord<byte[], byte[]> record : sent) {
                out.putInt(record.partition() == null ? -1 : record.partition());
            }
        }
        if (timestamps) {
            for (ProducerRecord<byte[], byte[]> record : sent) {
                out.putLong(record.timestamp() == null ? -1L : record.timestamp());
            }
        }
        column(out, sent, true);
        column(out, sent, false);
        if (headers) {
            for (ProducerRecord<byte[], byte[]> record : sent) {
                Header[] all = record.headers().toArray();
                out.putInt(all.length);
                for (Header header : all) {
                    out.putString(header.key());
                    out.putBytes(header.value());
                }
            }
        }
        lastOffsets(out, taken, json);
        return out;
    }

    private static void column(Wire.Out out, List<ProducerRecord<byte[], byte[]>> sent,
            boolean keys) {
        for (ProducerRecord<byte[], byte[]> record : sent) {
            byte[] data = keys ? record.key() : record.value();
            out.putInt(data == null ? -1 : data.length);
        }
        for (ProducerRecord<byte[], byte[]> record : sent) {
            byte[] data = keys ? record.key() : record.value();
            if (data != null) {
                out.putRaw(data, 0, data.length);
            }
        }
    }

    /** i32 P, then P × (partition JSON, offset JSON): each partition's last offset, in the
     * order of those last records. */
    private static void lastOffsets(Wire.Out out, List<SourceRecord> taken, OffsetJson json) {
        Map<Map<String, ?>, Integer> last = new HashMap<>();
        for (int i = 0; i < taken.size(); i++) {
            Map<String, ?> partition = taken.get(i).sourcePartition();
            if (partition != null) {
                last.put(partition, i);
            }
        }
        List<Integer> order = new ArrayList<>(last.values());
        order.sort(null);
        out.putInt(order.size());
        for (int i : order) {
            SourceRecord record = taken.get(i);
            out.putString(json.write(record.sourcePartition()));
            out.putString(json.write(record.sourceOffset()));
        }
    }
}
