package drivers

import (
	"errors"
	"reflect"
	"testing"
)

func TestRegistry(t *testing.T) {
	fail := errors.New("bad config")
	r := Registry{}
	if err := r.Register("a", func(map[string]string) (Driver, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("a", nil); !errors.Is(err, ErrDuplicateDriver) {
		t.Fatalf("second Register(a) = %v, want ErrDuplicateDriver", err)
	}
	other := Registry{"b": func(map[string]string) (Driver, error) { return nil, fail }}
	if err := r.Merge(other); err != nil {
		t.Fatal(err)
	}
	if err := r.Merge(other); !errors.Is(err, ErrDuplicateDriver) {
		t.Fatalf("second Merge = %v, want ErrDuplicateDriver", err)
	}
	if got := r.Names(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("Names() = %v", got)
	}
	tests := []struct {
		name string
		want error
	}{
		{"a", nil},
		{"b", fail},
		{"c", ErrUnknownDriver},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.New(tt.name, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New(%q) = %v, want %v", tt.name, err, tt.want)
			}
		})
	}
}
