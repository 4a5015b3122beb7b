package org.tidestream.hadoop;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;

/**
 * Writes and reads the same bytes as tide's Go benchmarks (storage/bench_test.go) through
 * Hadoop's own client, with the same commit protocol (temporary file, close, rename over), and
 * times the same metadata calls. Prints one "key=value ..." line.
 *
 * <pre>
 * Bench --uri hdfs://127.0.0.1:port/dir --bytes N --iterations K
 * Bench --uri hdfs://127.0.0.1:port/dir --list-once     (one list; for timing a cold JVM)
 * </pre>
 */
public final class Bench {
    public static void main(String[] args) throws Exception {
        String uri = null;
        long bytes = 64L << 20;
        int iterations = 3;
        boolean listOnce = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--uri" -> uri = args[++i];
                case "--bytes" -> bytes = Long.parseLong(args[++i]);
                case "--iterations" -> iterations = Integer.parseInt(args[++i]);
                case "--list-once" -> listOnce = true;
                default -> {
                    System.err.println("bench: unknown argument " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (uri == null) {
            System.err.println("usage: Bench --uri hdfs://host:port/dir [--bytes N] [--iterations K] [--list-once]");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.setInt("dfs.replication", 1);
        Path dir = new Path(uri);
        try (FileSystem fs = FileSystem.newInstance(URI.create(uri), conf)) {
            fs.mkdirs(dir);
            // Without the cluster's hdfs-site.xml on the classpath the client would pick its
            // built-in 128 MiB block size; tide's Go client takes the namenode's (the mini-cluster
            // uses 1 MiB blocks). Writing with the namenode's block size makes both read the same
            // number of blocks, each a datanode connection of its own.
            conf.setLong("dfs.blocksize", fs.getServerDefaults(dir).getBlockSize());
        }
        try (FileSystem fs = FileSystem.newInstance(URI.create(uri), conf)) {
            if (listOnce) {
                FileStatus[] st = fs.listStatus(dir);
                System.out.printf(Locale.ROOT, "java-hdfs list_once_entries=%d%n", st.length);
                return;
            }
            run(fs, dir, bytes, iterations);
            fs.delete(dir, true);
        }
    }

    private static void run(FileSystem fs, Path dir, long bytes, int iterations) throws IOException {
        byte[] chunk = new byte[1 << 20];
        // Warm-up: one write and read, not timed.
        Path file = new Path(dir, "w");
        commit(fs, dir, file, bytes, chunk);
        read(fs, file, chunk);

        long blockSize = fs.getFileStatus(file).getBlockSize();

        long t0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            commit(fs, dir, new Path(dir, "w-" + (i % 2)), bytes, chunk);
        }
        double writeSec = (System.nanoTime() - t0) / 1e9;

        t0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            long n = read(fs, file, chunk);
            if (n != bytes) {
                throw new IOException("read " + n + " bytes from " + file + ", want " + bytes);
            }
        }
        double readSec = (System.nanoTime() - t0) / 1e9;

        Path listDir = new Path(dir, "d");
        for (int i = 0; i < 10; i++) {
            commit(fs, listDir, new Path(listDir, "f" + i), 1, chunk);
        }
        int metaIters = 200;
        for (int i = 0; i < 20; i++) {
            fs.listStatus(listDir);
        }
        t0 = System.nanoTime();
        for (int i = 0; i < metaIters; i++) {
            if (fs.listStatus(listDir).length != 10) {
                throw new IOException("list of " + listDir + " did not return 10 entries");
            }
        }
        double listUs = (System.nanoTime() - t0) / 1e3 / metaIters;

        t0 = System.nanoTime();
        for (int i = 0; i < metaIters; i++) {
            commit(fs, dir, new Path(dir, "e"), 0, chunk);
        }
        double createUs = (System.nanoTime() - t0) / 1e3 / metaIters;

        double mb = bytes * (double) iterations / 1e6;
        System.out.printf(Locale.ROOT,
                "java-hdfs bytes=%d block_size=%d iterations=%d write_mbps=%.1f read_mbps=%.1f list_us=%.0f create_empty_rename_us=%.0f%n",
                bytes, blockSize, iterations, mb / writeSec, mb / readSec, listUs, createUs);
    }

    /** Writes bytes of the Go benchmark's pattern to a temporary file and renames it over file. */
    private static void commit(FileSystem fs, Path dir, Path file, long bytes, byte[] chunk) throws IOException {
        Path tmp = new Path(dir, ".tide-tmp." + file.getName() + "." + System.nanoTime());
        try (FSDataOutputStream out = fs.create(tmp, true)) {
            write(out, bytes, chunk);
        }
        if (fs instanceof DistributedFileSystem dfs) {
            dfs.rename(tmp, file, Options.Rename.OVERWRITE);
        } else {
            fs.delete(file, false);
            if (!fs.rename(tmp, file)) {
                throw new IOException("rename " + tmp + " to " + file + " failed");
            }
        }
    }

    private static void write(OutputStream out, long bytes, byte[] chunk) throws IOException {
        long off = 0;
        while (off < bytes) {
            int n = (int) Math.min(chunk.length, bytes - off);
            for (int j = 0; j < n; j++) {
                long i = off + j;
                chunk[j] = (byte) (i * 7 + (i >> 8));
            }
            out.write(chunk, 0, n);
            off += n;
        }
    }

    private static long read(FileSystem fs, Path file, byte[] chunk) throws IOException {
        long total = 0;
        try (InputStream in = fs.open(file)) {
            int n;
            while ((n = in.read(chunk)) > 0) {
                total += n;
            }
        }
        return total;
    }
}
