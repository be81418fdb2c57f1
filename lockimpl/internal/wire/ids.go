package wire

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// NewUUID returns a random (version 4) UUID in Java's text form, as
// Redisson's ServiceManager id, the first half of every owner id.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// RequestIDs makes the request ids of unlock latches: 16 random hex
// digits per client, then 16 of a counter, 32 in all like Redisson's
// random ids. A latch only has to differ from every other unlock's of the
// same lock within its lifetime; a counter does that without a random
// read per unlock. Init it before use.
type RequestIDs struct {
	prefix [16]byte
	n      atomic.Uint64
}

// Init draws the random prefix.
func (r *RequestIDs) Init() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	hexTo(r.prefix[:], binary.BigEndian.Uint64(b[:]))
}

// LatchKey is the key of a fresh unlock latch for lock name.
func (r *RequestIDs) LatchKey(name string) string {
	var id [32]byte
	copy(id[:16], r.prefix[:])
	hexTo(id[16:], r.n.Add(1))
	return UnlockLatchKey(name, id[:])
}

// hexTo writes v as 16 lower-case hex digits into dst.
func hexTo(dst []byte, v uint64) {
	var buf [16]byte
	s := strconv.AppendUint(buf[:0], v, 16)
	n := copy(dst[16-len(s):], s)
	for i := range 16 - n {
		dst[i] = '0'
	}
}
