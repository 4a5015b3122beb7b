package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// WriteFile creates name with data and commits it (replacing an existing file atomically).
func WriteFile(ctx context.Context, s Storage, name string, data []byte) error {
	w, err := s.Create(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		if aerr := w.Abort(ctx); aerr != nil {
			return errors.Join(err, aerr)
		}
		return err
	}
	return w.Commit(ctx)
}

// ReadFile returns the contents of name.
func ReadFile(ctx context.Context, s Storage, name string) ([]byte, error) {
	r, err := s.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	cerr := r.Close()
	if err != nil {
		return nil, fmt.Errorf("reading %s under %s: %w", name, s.URI(), err)
	}
	if cerr != nil {
		return nil, fmt.Errorf("closing %s under %s: %w", name, s.URI(), cerr)
	}
	return data, nil
}
