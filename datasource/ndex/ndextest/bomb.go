// Package ndextest makes hostile Nodius exports for tests.
package ndextest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/adler32"

	"github.com/nodius/nodius-ai/datasource/ndex"
)

// Bomb returns a valid graph export (.ndex, encrypted with secret) whose payload
// is a graph JSON of about inflated bytes, `{"graph":…,"nodes":[{},{},…],"edges":[]}`:
// a decompression bomb of about inflated/1000 bytes. It is made without
// compressing inflated bytes: the deflate stream of a periodic text settles into
// one repeated segment, which is copied, and the zlib checksum is combined
// arithmetically.
func Bomb(inflated int64, secret string) ([]byte, error) {
	const head, tail = `{"graph":{"name":"bomb"},"nodes":[`, `{}],"edges":[]}`
	chunk := bytes.Repeat([]byte(`{},`), 1<<20)
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	write := func(b []byte) []byte {
		start := z.Len()
		_, _ = zw.Write(b)
		_ = zw.Flush()
		return append([]byte(nil), z.Bytes()[start:]...)
	}
	first := write([]byte(head))
	var segs [][]byte
	for range 3 { // the first chunks fill the window; the third is the steady one
		segs = append(segs, write(chunk))
	}
	if !bytes.Equal(segs[1], segs[2]) {
		return nil, errNotPeriodic
	}
	start := z.Len()
	_, _ = zw.Write([]byte(tail))
	_ = zw.Close()
	end := append([]byte(nil), z.Bytes()[start:]...)

	repeats := max((inflated-int64(len(head)+len(tail)))/int64(len(chunk)), 2)
	var out bytes.Buffer
	out.Write(first)
	out.Write(segs[0])
	for range repeats - 1 {
		out.Write(segs[1])
	}
	out.Write(end[:len(end)-4]) // the checksum, of what was really written, is replaced
	sum := adler32.Checksum([]byte(head))
	c := adler32.Checksum(chunk)
	for range repeats {
		sum = combine(sum, c, int64(len(chunk)))
	}
	sum = combine(sum, adler32.Checksum([]byte(tail)), int64(len(tail)))
	out.Write(binary.BigEndian.AppendUint32(nil, sum))
	return ndex.EncodeCompressed(out.Bytes(), ndex.Graph, secret)
}

type notPeriodic struct{}

func (notPeriodic) Error() string { return "ndextest: the deflate stream did not settle" }

var errNotPeriodic error = notPeriodic{}

// combine is the Adler-32 of A followed by B, from their checksums and B's length
// (zlib's adler32_combine).
func combine(a, b uint32, lenB int64) uint32 {
	const mod = 65521
	rem := uint64(lenB % mod)
	s1a, s2a := uint64(a&0xffff), uint64(a>>16)
	s1b, s2b := uint64(b&0xffff), uint64(b>>16)
	s1 := (s1a + s1b + mod - 1) % mod
	s2 := (s2a + s2b + rem*s1a%mod + mod - rem) % mod
	return uint32(s2<<16 | s1)
}
