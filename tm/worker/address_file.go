package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/tidestream/tide/storage"
)

// EnvAMAddressFile names the URI of the AM address file when Config.AMAddressFile is
// empty; tide's YARN driver sets it in every TaskManager container (yarn.EnvAMAddressFile).
const EnvAMAddressFile = "TIDE_AM_ADDRESS_FILE"

// maxAddressFileSize bounds what is read of an address file.
const maxAddressFileSize = 1024

// addressFile is a file holding host:port of the AM's RPC endpoint, rewritten by every
// AM attempt once it listens. The storage is opened on first use and kept.
type addressFile struct {
	root, name string
	opts       storage.Options
	st         storage.Storage
}

func newAddressFile(uri string) (*addressFile, error) {
	i := strings.LastIndex(uri, "/")
	if i < 0 || i == len(uri)-1 || !strings.Contains(uri[:i], "://") {
		return nil, fmt.Errorf("AM address file %q: expected scheme://…/name", uri)
	}
	return &addressFile{root: uri[:i], name: uri[i+1:]}, nil
}

// uri is the file's URI.
func (f *addressFile) uri() string { return f.root + "/" + f.name }

// read returns the address the file names now.
func (f *addressFile) read(ctx context.Context) (string, error) {
	if f.st == nil {
		st, err := storage.Open(ctx, f.root, f.opts)
		if err != nil {
			return "", fmt.Errorf("AM address file %s: %w", f.uri(), err)
		}
		f.st = st
	}
	r, err := f.st.Open(ctx, f.name)
	if err != nil {
		return "", fmt.Errorf("AM address file %s: %w", f.uri(), err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxAddressFileSize+1))
	if err != nil {
		return "", fmt.Errorf("AM address file %s: %w", f.uri(), err)
	}
	addr, err := parseAMAddress(b)
	if err != nil {
		return "", fmt.Errorf("AM address file %s: %w", f.uri(), err)
	}
	return addr, nil
}

func (f *addressFile) close() {
	if f.st != nil {
		_ = f.st.Close()
		f.st = nil
	}
}

// parseAMAddress reads the one line host:port of an address file.
func parseAMAddress(b []byte) (string, error) {
	if len(b) > maxAddressFileSize {
		return "", fmt.Errorf("%d bytes or more: expected one line host:port", maxAddressFileSize)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", errors.New("empty: expected host:port")
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return "", fmt.Errorf("%q: expected one line host:port", s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("%q: expected host:port: %w", s, err)
	}
	if host == "" {
		return "", fmt.Errorf("%q: no host", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
		return "", fmt.Errorf("%q: port %q: expected 1-65535", s, port)
	}
	return s, nil
}
