package org.tidestream.hadoop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.SafeModeAction;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;

/**
 * A line protocol on a loopback TCP port for fault tests. One command per line, one reply line:
 * "ok" or "error &lt;message&gt;". Commands run one at a time (the handler is synchronized).
 *
 * <pre>
 * ping
 * stop-namenode
 * restart-namenode                 (waits until the namenode is active again)
 * restart-datanode                 (datanode 0, same ports; waits until it has registered)
 * set-space-quota /path bytes
 * clear-quota /path
 * safemode enter|leave
 * mkdir /path octal-mode [owner]   (creates as the superuser; optional chown)
 * </pre>
 */
final class ControlServer {
    private final MiniDFSCluster dfs;
    private final ServerSocket server;
    private volatile boolean closed;

    ControlServer(MiniDFSCluster dfs) throws IOException {
        this.dfs = dfs;
        this.server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
    }

    int port() {
        return server.getLocalPort();
    }

    void start() {
        Thread t = new Thread(this::acceptLoop, "tide-hadoop-control");
        t.setDaemon(true);
        t.start();
    }

    void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing a listening socket only fails if already closed
        }
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = server.accept();
                Thread t = new Thread(() -> serve(s), "tide-hadoop-control-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    Launcher.log("control: accept: %s", e);
                }
            }
        }
    }

    private void serve(Socket s) {
        try (s;
             BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) {
                    continue;
                }
                String reply;
                try {
                    handle(line.split("\\s+"));
                    reply = "ok";
                } catch (Exception e) {
                    reply = "error " + String.valueOf(e).replace('\n', ' ');
                }
                Launcher.log("control: %s -> %s", line, reply);
                out.println(reply);
            }
        } catch (IOException e) {
            Launcher.log("control: connection: %s", e);
        }
    }

    private synchronized void handle(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "ping" -> args(cmd, 0);
            case "stop-namenode" -> {
                args(cmd, 0);
                dfs.shutdownNameNode(0);
            }
            case "restart-namenode" -> {
                args(cmd, 0);
                dfs.restartNameNode(0, true);
                dfs.waitActive();
            }
            case "restart-datanode" -> {
                args(cmd, 0);
                if (!dfs.restartDataNode(0, true)) {
                    throw new IllegalStateException("datanode 0 did not restart");
                }
                dfs.waitActive();
            }
            case "set-space-quota" -> {
                args(cmd, 2);
                fs().setQuota(new Path(cmd[1]), HdfsConstants.QUOTA_DONT_SET, Long.parseLong(cmd[2]));
            }
            case "clear-quota" -> {
                args(cmd, 1);
                fs().setQuota(new Path(cmd[1]), HdfsConstants.QUOTA_RESET, HdfsConstants.QUOTA_RESET);
            }
            case "safemode" -> {
                args(cmd, 1);
                switch (cmd[1]) {
                    case "enter" -> fs().setSafeMode(SafeModeAction.ENTER);
                    case "leave" -> fs().setSafeMode(SafeModeAction.LEAVE);
                    default -> throw new IllegalArgumentException("safemode wants enter or leave, got " + cmd[1]);
                }
            }
            case "mkdir" -> {
                if (cmd.length != 3 && cmd.length != 4) {
                    throw new IllegalArgumentException("usage: mkdir /path octal-mode [owner]");
                }
                Path p = new Path(cmd[1]);
                FsPermission perm = new FsPermission(Short.parseShort(cmd[2], 8));
                DistributedFileSystem fs = fs();
                fs.mkdirs(p, perm);
                fs.setPermission(p, perm);
                if (cmd.length == 4) {
                    fs.setOwner(p, cmd[3], null);
                }
            }
            default -> throw new IllegalArgumentException("unknown command " + cmd[0]);
        }
    }

    private DistributedFileSystem fs() throws IOException {
        return dfs.getFileSystem();
    }

    private static void args(String[] cmd, int n) {
        if (cmd.length != n + 1) {
            throw new IllegalArgumentException(cmd[0] + " takes " + n + " argument(s), got " + (cmd.length - 1));
        }
    }
}
