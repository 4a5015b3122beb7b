package storage

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"sort"
	"strings"

	"github.com/colinmarc/hdfs/v2/hadoopconf"
)

// EnvDefaultFS names the default file system (hdfs://namenode:port) for processes without
// a Hadoop configuration directory: tide run --target yarn-per-job sets it in the AM's and
// TaskManagers' containers to the client's fs.defaultFS, so hdfs:///path works there too.
const EnvDefaultFS = "TIDE_HDFS_DEFAULT_FS"

// defaultNamenodePort is Hadoop's default namenode RPC port (fs.defaultFS without a port).
const defaultNamenodePort = "8020"

// namenodeAddrs resolves the namenode addresses the Hadoop way: the explicit override, else
// the URI's authority (a host:port, a host with the default port, or an HA nameservice from
// hdfs-site.xml), else fs.defaultFS from core-site.xml under $HADOOP_CONF_DIR (or
// $HADOOP_HOME/conf), else $TIDE_HDFS_DEFAULT_FS.
func namenodeAddrs(u *url.URL, override string) ([]string, error) {
	if override != "" {
		return splitAddrs(override)
	}
	var conf hadoopconf.HadoopConf
	loadConf := func() error {
		if conf != nil {
			return nil
		}
		c, err := hadoopconf.LoadFromEnvironment()
		if err != nil {
			return fmt.Errorf("loading Hadoop configuration from HADOOP_CONF_DIR=%q: %w", os.Getenv("HADOOP_CONF_DIR"), err)
		}
		conf = c
		return nil
	}
	if u.Host != "" {
		if u.Port() != "" {
			return splitAddrs(u.Host)
		}
		if err := loadConf(); err != nil {
			return nil, err
		}
		if addrs := nameserviceAddrs(conf, u.Hostname()); len(addrs) > 0 {
			return addrs, nil
		}
		return []string{net.JoinHostPort(u.Hostname(), defaultNamenodePort)}, nil
	}
	if err := loadConf(); err != nil {
		return nil, err
	}
	if fsURI := conf["fs.defaultFS"]; fsURI != "" {
		d, err := url.Parse(fsURI)
		if err != nil || d.Scheme != "hdfs" || d.Host == "" {
			return nil, fmt.Errorf("fs.defaultFS %q in core-site.xml under HADOOP_CONF_DIR=%q: want hdfs://namenode[:port]",
				fsURI, os.Getenv("HADOOP_CONF_DIR"))
		}
		return namenodeAddrs(d, "")
	}
	if addrs := conf.Namenodes(); len(addrs) > 0 {
		sort.Strings(addrs)
		return addrs, nil
	}
	if fsURI := os.Getenv(EnvDefaultFS); fsURI != "" {
		d, err := url.Parse(fsURI)
		if err != nil || d.Scheme != "hdfs" || d.Host == "" {
			return nil, fmt.Errorf("%s=%q: want hdfs://namenode[:port]", EnvDefaultFS, fsURI)
		}
		return namenodeAddrs(d, "")
	}
	return nil, fmt.Errorf("%w: URI %q names no namenode and neither fs.defaultFS nor dfs.namenode.rpc-address is set under HADOOP_CONF_DIR=%q",
		ErrNoSuchNamenode, u.String(), os.Getenv("HADOOP_CONF_DIR"))
}

// nameserviceAddrs returns the RPC addresses of the namenodes of HA nameservice ns
// (dfs.namenode.rpc-address.<ns>.<nn>), sorted.
func nameserviceAddrs(conf hadoopconf.HadoopConf, ns string) []string {
	prefix := "dfs.namenode.rpc-address." + ns + "."
	var addrs []string
	for k, v := range conf {
		if strings.HasPrefix(k, prefix) && v != "" {
			addrs = append(addrs, v)
		}
	}
	sort.Strings(addrs)
	return addrs
}

func splitAddrs(s string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			a = net.JoinHostPort(a, defaultNamenodePort)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: empty namenode address %q", ErrNoSuchNamenode, s)
	}
	return addrs, nil
}

// hdfsUser is the user HDFS calls run as: the override, else $HADOOP_USER_NAME, else the OS user.
func hdfsUser(override string) (string, error) {
	if override != "" {
		return override, nil
	}
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u, nil
	}
	cur, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("finding the OS user for HDFS (HADOOP_USER_NAME is unset): %w", err)
	}
	return cur.Username, nil
}
