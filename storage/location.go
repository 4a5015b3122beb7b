package storage

// location is the root URI of a storage (file:///…, hdfs://…): it names the storage and
// the files under it, and checks the names callers pass.
type location struct {
	uri string
}

func (l location) URI() string { return l.uri }

// uriOf is the URI of a cleaned name; "" is the root.
func (l location) uriOf(name string) string {
	if name == "" {
		return l.uri
	}
	return l.uri + "/" + name
}

// name validates name (the root only when root is true); on error it returns an *Error
// for op.
func (l location) name(op, name string, root bool) (string, error) {
	n, err := cleanName(name, root)
	if err != nil {
		return "", &Error{Op: op, Path: l.uri + "/" + name, Kind: ErrInvalidName, Err: err}
	}
	return n, nil
}
