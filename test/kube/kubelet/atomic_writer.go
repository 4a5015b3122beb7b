package kubelet

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The kubelet's layout of a ConfigMap, Secret or downwardAPI volume (its AtomicWriter):
//
//	<dir>/..2026_12_01_12_00_00.123456789/<path>   the files of one version
//	<dir>/..data -> ..2026_12_01_12_00_00.123456789
//	<dir>/<first path element> -> ..data/<first path element>
//
// A new version is written to a fresh timestamped directory, a "..data_tmp" symlink to it is
// renamed over "..data" (one atomic step), the per-key symlinks are added or removed, and the
// old version is deleted. Readers that open <dir>/<key> always see one whole version.
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
)

// volumeFile is one file of a volume version.
type volumeFile struct {
	data []byte
	mode os.FileMode
}

// writeAtomic makes dir hold exactly files (path relative to dir -> content); it does
// nothing and returns false when the current version already has that content.
func writeAtomic(dir string, files map[string]volumeFile) (bool, error) {
	for p := range files {
		if err := checkVolumePath(p); err != nil {
			return false, fmt.Errorf("volume %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	oldTS, _ := os.Readlink(filepath.Join(dir, dataDirName))
	if oldTS != "" && sameContent(filepath.Join(dir, oldTS), files) {
		return false, nil
	}
	ts, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, err
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return false, err
	}
	for p, f := range files {
		full := filepath.Join(ts, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return false, err
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(full, f.data, mode); err != nil {
			return false, err
		}
		if err := os.Chmod(full, mode); err != nil {
			return false, err
		}
	}
	tmp := filepath.Join(dir, newDataDirName)
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataDirName)); err != nil {
		return false, err
	}
	// The user-visible names: one symlink per top-level element, stale ones removed.
	want := map[string]bool{}
	for p := range files {
		want[strings.SplitN(p, "/", 2)[0]] = true
	}
	for top := range want {
		link := filepath.Join(dir, top)
		target := filepath.Join(dataDirName, top)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return false, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "..") {
			if n != dataDirName && n != filepath.Base(ts) && e.IsDir() {
				_ = os.RemoveAll(filepath.Join(dir, n))
			}
			continue
		}
		if !want[n] && e.Type()&fs.ModeSymlink != 0 {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
	return true, nil
}

// checkVolumePath refuses the paths the API server also refuses in items: absolute ones,
// ones with a ".." element and ones starting with "..".
func checkVolumePath(p string) error {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "..") {
		return fmt.Errorf("path %q: must be relative and not start with '..'", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." || el == "" {
			return fmt.Errorf("path %q: must not hold '..' or empty elements", p)
		}
	}
	return nil
}

// sameContent reports whether the version dir holds exactly files.
func sameContent(ver string, files map[string]volumeFile) bool {
	var have []string
	err := filepath.WalkDir(ver, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(ver, p)
			have = append(have, rel)
		}
		return nil
	})
	if err != nil || len(have) != len(files) {
		return false
	}
	sort.Strings(have)
	for _, rel := range have {
		f, ok := files[rel]
		if !ok {
			return false
		}
		st, err := os.Stat(filepath.Join(ver, rel))
		if err != nil {
			return false
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if st.Mode().Perm() != mode.Perm() {
			return false
		}
		b, err := os.ReadFile(filepath.Join(ver, rel))
		if err != nil || !bytes.Equal(b, f.data) {
			return false
		}
	}
	return true
}
