package yarn

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// SiteConfig is the name → value map of a Hadoop *-site.xml file.
type SiteConfig map[string]string

// ParseSite reads a Hadoop configuration file (<configuration><property><name>…</name>
// <value>…</value></property>…</configuration>). Later properties win.
func ParseSite(r io.Reader) (SiteConfig, error) {
	var doc struct {
		XMLName    xml.Name `xml:"configuration"`
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	dec := xml.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parsing Hadoop configuration XML: %w", err)
	}
	out := SiteConfig{}
	for _, p := range doc.Properties {
		name := strings.TrimSpace(p.Name)
		if name == "" {
			continue
		}
		out[name] = strings.TrimSpace(p.Value)
	}
	return out, nil
}

// ErrNoYarnSite: neither YARN_CONF_DIR nor HADOOP_CONF_DIR holds a yarn-site.xml.
var ErrNoYarnSite = errors.New("no yarn-site.xml found (set HADOOP_CONF_DIR or YARN_CONF_DIR, or -Dyarn.resourcemanager.address=host:port)")

// LoadYarnSite reads yarn-site.xml from $YARN_CONF_DIR, else $HADOOP_CONF_DIR (getenv is
// os.Getenv in production). It returns the file it read.
func LoadYarnSite(getenv func(string) string) (SiteConfig, string, error) {
	for _, v := range []string{"YARN_CONF_DIR", "HADOOP_CONF_DIR"} {
		dir := getenv(v)
		if dir == "" {
			continue
		}
		path := filepath.Join(dir, "yarn-site.xml")
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, path, fmt.Errorf("reading %s: %w", path, err)
		}
		site, err := ParseSite(f)
		f.Close()
		if err != nil {
			return nil, path, fmt.Errorf("%s: %w", path, err)
		}
		return site, path, nil
	}
	return nil, "", ErrNoYarnSite
}

// Hadoop's defaults for the RM addresses (YarnConfiguration).
const (
	defaultRMAddress        = "0.0.0.0:8032"
	defaultSchedulerAddress = "0.0.0.0:8030"
)

// RMAddresses returns the client and scheduler addresses of the ResourceManager:
// yarn.resourcemanager.address and .scheduler.address, else yarn.resourcemanager.hostname
// with the default ports.
func (s SiteConfig) RMAddresses() (client, scheduler string) {
	host := s["yarn.resourcemanager.hostname"]
	pick := func(key, def string) string {
		if v := s[key]; v != "" {
			return v
		}
		if host != "" {
			return host + def[strings.LastIndex(def, ":"):]
		}
		return def
	}
	return pick("yarn.resourcemanager.address", defaultRMAddress), pick("yarn.resourcemanager.scheduler.address", defaultSchedulerAddress)
}
