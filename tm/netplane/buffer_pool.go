package netplane

import "sync"

// bufferPool recycles network buffers of one size. Oversized buffers (a record
// larger than a buffer) are allocated on demand and left to the collector.
type bufferPool struct {
	size int
	pool sync.Pool // of *[]byte with cap == size
}

func newBufferPool(size int) *bufferPool {
	p := &bufferPool{size: size}
	p.pool.New = func() any {
		b := make([]byte, 0, size)
		return &b
	}
	return p
}

// get returns a buffer of length n.
func (p *bufferPool) get(n int) []byte {
	if n > p.size {
		return make([]byte, n)
	}
	b := *(p.pool.Get().(*[]byte))
	return b[:n]
}

// put recycles b; the caller must not use it afterwards.
func (p *bufferPool) put(b []byte) {
	if cap(b) != p.size {
		return
	}
	b = b[:0]
	p.pool.Put(&b)
}
