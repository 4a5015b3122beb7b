package org.tidestream.hadoop;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * Starts a MiniDFSCluster (and, with --yarn, a MiniYARNCluster with two NodeManagers) on loopback
 * for tide's Go integration tests. Once everything is up it writes core-site.xml (and
 * yarn-site.xml) into the conf dir, then the env file (written under a temporary name and renamed,
 * so its presence means "ready"). A {@link ControlServer} on a loopback port lets fault tests stop
 * and restart the namenode, set quotas and toggle safe mode. SIGTERM stops everything and removes
 * the env file.
 *
 * <pre>
 * java -cp ... org.tidestream.hadoop.Launcher --base DIR --env FILE [--yarn] [--datanodes N]
 * </pre>
 */
public final class Launcher {
    private final Path base;
    private final Path envFile;
    private final boolean withYarn;
    private final int datanodes;

    private MiniDFSCluster dfs;
    private MiniYARNCluster yarn;
    private ControlServer control;
    private final CountDownLatch stopped = new CountDownLatch(1);

    private Launcher(Path base, Path envFile, boolean withYarn, int datanodes) {
        this.base = base;
        this.envFile = envFile;
        this.withYarn = withYarn;
        this.datanodes = datanodes;
    }

    public static void main(String[] args) throws Exception {
        Path base = null;
        Path env = null;
        boolean withYarn = false;
        int datanodes = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--base" -> base = Path.of(args[++i]).toAbsolutePath();
                case "--env" -> env = Path.of(args[++i]).toAbsolutePath();
                case "--yarn" -> withYarn = true;
                case "--datanodes" -> datanodes = Integer.parseInt(args[++i]);
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (base == null || env == null) {
            usage("--base and --env are required");
        }
        Launcher l = new Launcher(base, env, withYarn, datanodes);
        Runtime.getRuntime().addShutdownHook(new Thread(l::stop, "tide-hadoop-shutdown"));
        try {
            l.start();
        } catch (Throwable t) {
            System.err.println("tide-hadoop: start failed: " + t);
            t.printStackTrace();
            Runtime.getRuntime().halt(1);
        }
        l.stopped.await();
    }

    private static void usage(String msg) {
        System.err.println("tide-hadoop: " + msg);
        System.err.println("usage: Launcher --base DIR --env FILE [--yarn] [--datanodes N]");
        System.exit(2);
    }

    private void start() throws Exception {
        long t0 = System.nanoTime();
        Files.createDirectories(base);
        Path confDir = base.resolve("conf");
        Files.createDirectories(confDir);
        Files.deleteIfExists(envFile);

        YarnConfiguration conf = new YarnConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.resolve("dfs").toString());
        // Loopback only, short timeouts so restarts and datanode reports are quick.
        conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
        conf.setInt("dfs.namenode.safemode.extension", 0);
        conf.setInt("dfs.heartbeat.interval", 1);
        conf.setInt("dfs.namenode.heartbeat.recheck-interval", 5000);
        conf.setBoolean("dfs.permissions.enabled", true);
        // A small block size keeps space-quota arithmetic readable (quota charges whole blocks).
        conf.setLong("dfs.blocksize", 1L << 20);
        conf.setInt("dfs.replication", 1);
        conf.setLong("dfs.namenode.fs-limits.min-block-size", 1L << 10);
        // Let every client, whatever user it claims, write under / (tests create their roots there).
        conf.set("fs.permissions.umask-mode", "000");

        dfs = new MiniDFSCluster.Builder(conf, base.resolve("dfs").toFile())
                .numDataNodes(datanodes)
                .format(true)
                .checkExitOnShutdown(false)
                .build();
        dfs.waitActive();
        dfs.getFileSystem().setPermission(new org.apache.hadoop.fs.Path("/"),
                new org.apache.hadoop.fs.permission.FsPermission((short) 0777));
        String defaultFS = dfs.getURI().toString();
        conf.set("fs.defaultFS", defaultFS);
        log("HDFS up at %s in %d ms", defaultFS, (System.nanoTime() - t0) / 1_000_000);

        Map<String, String> env = new LinkedHashMap<>();
        env.put("HDFS_NAMENODE", "127.0.0.1:" + dfs.getNameNodePort());
        env.put("HDFS_URI", "hdfs://127.0.0.1:" + dfs.getNameNodePort());
        env.put("HADOOP_CONF_DIR", confDir.toString());

        if (withYarn) {
            startYarn(conf, env);
        }

        Configuration coreSite = new Configuration(false);
        coreSite.set("fs.defaultFS", defaultFS);
        coreSite.set("dfs.replication", "1");
        coreSite.set("dfs.blocksize", String.valueOf(1L << 20));
        writeXml(coreSite, confDir.resolve("core-site.xml"));
        if (yarn != null) {
            Configuration yc = new Configuration(yarn.getConfig());
            yc.set("fs.defaultFS", defaultFS);
            writeXml(yc, confDir.resolve("yarn-site.xml"));
        }

        control = new ControlServer(dfs);
        control.start();
        env.put("HADOOP_CONTROL", "127.0.0.1:" + control.port());
        env.put("HADOOP_LAUNCHER_PID", String.valueOf(ProcessHandle.current().pid()));
        env.put("HADOOP_STARTUP_MS", String.valueOf((System.nanoTime() - t0) / 1_000_000));
        writeEnv(env);
        log("ready in %d ms; env file %s", (System.nanoTime() - t0) / 1_000_000, envFile);
    }

    private void startYarn(YarnConfiguration conf, Map<String, String> env) throws Exception {
        long t0 = System.nanoTime();
        conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", 2048);
        conf.setInt("yarn.nodemanager.resource.cpu-vcores", 4);
        conf.setInt("yarn.scheduler.minimum-allocation-mb", 64);
        conf.setInt("yarn.scheduler.maximum-allocation-mb", 2048);
        conf.set("yarn.scheduler.capacity.root.queues", "default");
        conf.set("yarn.scheduler.capacity.root.default.capacity", "100");
        conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "1.0");
        conf.setBoolean("yarn.scheduler.include-port-in-node-name", true);
        conf.setBoolean("yarn.nodemanager.vmem-check-enabled", false);
        conf.setBoolean("yarn.nodemanager.pmem-check-enabled", false);
        conf.set("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", "99.0");
        conf.setInt("yarn.resourcemanager.am.max-attempts", 3); // lets tide test AM restarts (two AM kills: three attempts)
        yarn = new MiniYARNCluster("tide-yarn", 2, 1, 1);
        yarn.init(conf);
        yarn.start();
        if (!yarn.waitForNodeManagersToConnect(60_000)) {
            throw new IOException("YARN: NodeManagers did not connect to the ResourceManager within 60 s");
        }
        Configuration yc = yarn.getConfig();
        env.put("YARN_RM_ADDRESS", yc.get(YarnConfiguration.RM_ADDRESS));
        env.put("YARN_SCHEDULER_ADDRESS", yc.get(YarnConfiguration.RM_SCHEDULER_ADDRESS));
        env.put("YARN_RM_WEBAPP_ADDRESS", yc.get(YarnConfiguration.RM_WEBAPP_ADDRESS));
        StringBuilder nms = new StringBuilder();
        for (int i = 0; i < 2; i++) {
            if (i > 0) {
                nms.append(',');
            }
            nms.append(yarn.getNodeManager(i).getNMContext().getNodeId().toString());
        }
        env.put("YARN_NODEMANAGERS", nms.toString());
        log("YARN up (RM %s, NMs %s) in %d ms", env.get("YARN_RM_ADDRESS"), nms,
                (System.nanoTime() - t0) / 1_000_000);
    }

    private static void writeXml(Configuration c, Path target) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try (OutputStream out = new FileOutputStream(tmp.toFile())) {
            c.writeXml(out);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private void writeEnv(Map<String, String> env) throws IOException {
        Files.createDirectories(envFile.getParent());
        Path tmp = envFile.resolveSibling(envFile.getFileName() + ".tmp");
        StringBuilder sb = new StringBuilder("# written by tide's Hadoop launcher; removed on shutdown\n");
        env.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
        Files.writeString(tmp, sb.toString(), StandardCharsets.UTF_8);
        Files.move(tmp, envFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private void stop() {
        log("stopping");
        try {
            Files.deleteIfExists(envFile);
        } catch (IOException e) {
            log("removing %s: %s", envFile, e);
        }
        if (control != null) {
            control.close();
        }
        if (yarn != null) {
            try {
                yarn.stop();
            } catch (Throwable t) {
                log("stopping YARN: %s", t);
            }
        }
        if (dfs != null) {
            try {
                dfs.shutdown(true);
            } catch (Throwable t) {
                log("stopping HDFS: %s", t);
            }
        }
        log("stopped");
        stopped.countDown();
    }

    static void log(String fmt, Object... args) {
        PrintStream out = System.out;
        out.println("tide-hadoop: " + String.format(fmt, args));
        out.flush();
    }
}
