package wire

import (
	"crypto/rand"
	"encoding/hex"
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
