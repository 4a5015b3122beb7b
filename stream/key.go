package stream

import (
	"encoding/binary"
	"fmt"
	"reflect"

	"github.com/tidestream/tide/core/jobgraph"
)

// Key is the type of keys KeyBy accepts: they hash the same in every process, so records
// and state land in the same key group everywhere.
type Key interface {
	~string | ~int | ~int64 | ~int32 | ~uint64 | ~uint32
}

// KeyedStream is a stream partitioned by key; keyed operators built on it keep state per key.
type KeyedStream[T any, K Key] struct {
	in  DataStream[T]
	key func(T) K
}

// KeyBy partitions the stream by key: records with equal keys go to the same subtask of
// the next operator (through its key group, in [0, maxParallelism)).
func KeyBy[T any, K Key](s DataStream[T], key func(T) K) KeyedStream[T, K] {
	return KeyedStream[T, K]{in: s, key: key}
}

// hashFor returns the type-erased key hash of a keyed stream's records.
func (ks KeyedStream[T, K]) hashFor() func(any) uint64 {
	key := ks.key
	return func(v any) uint64 { return HashKey(key(v.(T))) }
}

// addKeyed adds a keyed operator fed by a HASH edge. The edge hashes ks.key, and the
// operator newOp makes must key its records with ks.key too: records arrive with the key
// group the edge routed them by, and keyed operators take it instead of hashing again
// (key_group_carried.go).
func addKeyed[T any, K Key, Out any](ks KeyedStream[T, K], name string, newOp func() Operator) DataStream[Out] {
	out := addOp[T, Out](ks.in, name, jobgraph.Hash, newOp)
	out.node.keyHash = ks.hashFor()
	key := ks.key
	out.node.keyHashT = func(v T) uint64 { return HashKey(key(v)) }
	out.node.parallelism = ks.in.job.parallelism
	return out
}

// HashKey hashes a key the same way in every process: FNV-1a for strings, the value itself
// for integers (jobgraph.KeyGroupFor mixes the bits).
func HashKey[K Key](k K) uint64 {
	switch v := any(k).(type) {
	case string:
		return hashString(v)
	case int:
		return uint64(v)
	case int64:
		return uint64(v)
	case int32:
		return uint64(v)
	case uint64:
		return v
	case uint32:
		return uint64(v)
	}
	rv := reflect.ValueOf(k)
	switch rv.Kind() {
	case reflect.String:
		return hashString(rv.String())
	case reflect.Int, reflect.Int64, reflect.Int32:
		return uint64(rv.Int())
	default:
		return rv.Uint()
	}
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// KeyGroupOf returns the key group of a key.
func KeyGroupOf[K Key](k K, maxParallelism int) int {
	return jobgraph.KeyGroupFor(HashKey(k), maxParallelism)
}

// appendKey encodes a key for keyed state.
func appendKey[K Key](dst []byte, k K) []byte {
	rv := reflect.ValueOf(k)
	switch rv.Kind() {
	case reflect.String:
		return append(dst, rv.String()...)
	case reflect.Int, reflect.Int64, reflect.Int32:
		return binary.AppendVarint(dst, rv.Int())
	default:
		return binary.AppendUvarint(dst, rv.Uint())
	}
}

// decodeKey decodes what appendKey wrote.
func decodeKey[K Key](b []byte) (K, error) {
	var k K
	rv := reflect.ValueOf(&k).Elem()
	switch rv.Kind() {
	case reflect.String:
		rv.SetString(string(b))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v, n := binary.Varint(b)
		if n <= 0 || n != len(b) {
			return k, fmt.Errorf("decoding key of type %T from %d bytes: %w", k, len(b), ErrShortBuffer)
		}
		rv.SetInt(v)
	default:
		v, n := binary.Uvarint(b)
		if n <= 0 || n != len(b) {
			return k, fmt.Errorf("decoding key of type %T from %d bytes: %w", k, len(b), ErrShortBuffer)
		}
		rv.SetUint(v)
	}
	return k, nil
}
