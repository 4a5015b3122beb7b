#!/usr/bin/env python3
"""Print a loopback TCP port that was free a moment ago, for a process started on it later.

The port is drawn from below the kernel's ephemeral range (and above 10000, where
well-known services listen), so no outgoing connection and no listener on port 0 can take it
in between; testkit.FreePort does the same for the Go tests. Where the range cannot be read,
the kernel picks one.
"""
import random
import socket


def bindable(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def main():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            first = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        first = 0
    if first > 11000:
        for _ in range(100):
            port = random.randrange(10000, first)
            if bindable(port):
                print(port)
                return
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()


main()
