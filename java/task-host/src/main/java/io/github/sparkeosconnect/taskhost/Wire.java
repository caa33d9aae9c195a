package io.github.sparkeosconnect.taskhost;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** The protocol's encoding (see {@link TaskHostMain}): little-endian frames and fields. */
public final class Wire {

    private Wire() {
    }

    /** A frame being written: kind byte, then fields. */
    public static final class Out {
        private byte[] data = new byte[256];
        private int size = 4; // the length prefix, filled in by finish()

        /** A frame of {@code kind}. */
        public Out(int kind) {
            put((byte) kind);
        }

        /** A frame of {@code kind} with room for about {@code capacity} bytes. */
        public Out(int kind, int capacity) {
            data = new byte[Math.max(16, capacity + 8)];
            put((byte) kind);
        }

        private void ensure(int more) {
            if (size + more > data.length) {
                data = Arrays.copyOf(data, Math.max(data.length * 2, size + more));
            }
        }

        /** One byte. */
        public Out put(byte value) {
            ensure(1);
            data[size++] = value;
            return this;
        }

        /** An i32. */
        public Out putInt(int value) {
            ensure(4);
            data[size] = (byte) value;
            data[size + 1] = (byte) (value >>> 8);
            data[size + 2] = (byte) (value >>> 16);
            data[size + 3] = (byte) (value >>> 24);
            size += 4;
            return this;
        }

        /** An i64. */
        public Out putLong(long value) {
            putInt((int) value);
            return putInt((int) (value >>> 32));
        }

        /** Raw bytes, no length. */
        public Out putRaw(byte[] bytes, int offset, int length) {
            ensure(length);
            System.arraycopy(bytes, offset, data, size, length);
            size += length;
            return this;
        }

        /** i32 length (-1: null) and the bytes. */
        public Out putBytes(byte[] bytes) {
            if (bytes == null) {
                return putInt(-1);
            }
            putInt(bytes.length);
            return putRaw(bytes, 0, bytes.length);
        }

        /** A string as UTF-8 bytes (null allowed). */
        public Out putString(String text) {
            return putBytes(text == null ? null : text.getBytes(StandardCharsets.UTF_8));
        }

        /** i32 count, then keys and values as strings. */
        public Out putMap(Map<String, String> map) {
            putInt(map.size());
            for (Map.Entry<String, String> entry : map.entrySet()) {
                putString(entry.getKey());
                putString(entry.getValue());
            }
            return this;
        }

        /** Writes the frame (length prefix included) to {@code out}, unflushed. */
        public void writeTo(OutputStream out) throws IOException {
            int length = size - 4;
            data[0] = (byte) length;
            data[1] = (byte) (length >>> 8);
            data[2] = (byte) (length >>> 16);
            data[3] = (byte) (length >>> 24);
            out.write(data, 0, size);
        }
    }

    /** A frame being read. */
    public static final class In {
        private final ByteBuffer buffer;
        /** The frame's kind. */
        public final int kind;

        /** Reads the body of one frame ({@code body} excludes the length prefix). */
        public In(byte[] body) {
            buffer = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
            kind = buffer.get() & 0xff;
        }

        /** An i32. */
        public int getInt() {
            return buffer.getInt();
        }

        /** An i64. */
        public long getLong() {
            return buffer.getLong();
        }

        /** {@code length} raw bytes. */
        public byte[] getRaw(int length) {
            byte[] bytes = new byte[length];
            buffer.get(bytes);
            return bytes;
        }

        /** Bytes with an i32 length (-1: null). */
        public byte[] getBytes() {
            int length = buffer.getInt();
            if (length < 0) {
                return null;
            }
            byte[] bytes = new byte[length];
            buffer.get(bytes);
            return bytes;
        }

        /** A UTF-8 string (null allowed). */
        public String getString() {
            byte[] bytes = getBytes();
            return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
        }

        /** A map of strings, in the order written. */
        public Map<String, String> getMap() {
            int count = buffer.getInt();
            Map<String, String> map = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                map.put(getString(), getString());
            }
            return map;
        }
    }

    /** Reads the next frame's body; null at the end of the stream before a frame starts. */
    public static byte[] readFrame(InputStream in) throws IOException {
        byte[] header = in.readNBytes(4);
        if (header.length == 0) {
            return null;
        }
        if (header.length < 4) {
            throw new EOFException("the stream ended inside a frame's length");
        }
        int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt();
        byte[] body = in.readNBytes(length);
        if (body.length < length) {
            throw new EOFException("the stream ended inside a frame of " + length + " bytes");
        }
        return body;
    }
}
