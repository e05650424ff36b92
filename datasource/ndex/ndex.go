// Package ndex reads and writes Nodius export files (.ndex), the files a Nodius
// user downloads from the editor: "NDEX", a format version (1), the export type,
// a 16-byte IV, then AES-256-CBC (PKCS#7 padding) over the zlib-deflated JSON
// payload. The key is scrypt(secret, "nodius-ndex-salt", N=16384, r=8, p=1, 32
// bytes); the secret is the server's NODIUS_EXPORT_SECRET, by default
// "nodius-default-export-key" (the server's export codec: docs/protocol.md).
package ndex

import (
	"bytes"
	"compress/zlib"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/scrypt"
)

// Type is what an export holds.
type Type byte

const (
	// Graph is a graph export: {graph, nodes, edges}, keys local, no node types.
	Graph Type = 0x01
	// HTMLGraph is an HTML class's graph: a graph export plus htmlClass.
	HTMLGraph Type = 0x02
	// NodeConfig is one node type, without its key.
	NodeConfig Type = 0x03
)

func (t Type) String() string {
	switch t {
	case Graph:
		return "graph"
	case HTMLGraph:
		return "HTML graph"
	case NodeConfig:
		return "node type"
	}
	return fmt.Sprintf("unknown (%d)", byte(t))
}

const (
	magic      = "NDEX"
	version    = 0x01
	headerSize = 4 + 1 + 1 + aes.BlockSize
	salt       = "nodius-ndex-salt"

	// SecretEnv names the environment variable holding the export secret, as
	// the Nodius server reads it.
	SecretEnv = "NODIUS_EXPORT_SECRET"
	// DefaultSecret is the Nodius server's secret when SecretEnv is not set.
	DefaultSecret = "nodius-default-export-key"

	// MaxPayload bounds the inflated payload (64 MiB). The Nodius server imports
	// an export of at most 5 MB, 10,000 nodes and 50,000 edges; such a graph's JSON
	// is about 15 MB, so this leaves four times that. The payload is inflated as a
	// stream that stops at the bound: a decompression bomb (a megabyte that inflates
	// to gigabytes) costs this much memory, not what it claims to hold.
	MaxPayload = 64 << 20

	// MaxFile bounds the export file itself: what the Nodius server accepts for
	// import (5 MB) with room to spare. A graph of MaxPayload bytes deflates to a
	// few megabytes.
	MaxFile = 32 << 20
)

// ErrDamaged is wrapped by the error of a file that is not a whole export.
var ErrDamaged = errors.New("damaged export")

// ErrDecrypt is wrapped by the error of an export that does not decrypt: the
// secret is not the one it was made with, or the file is damaged.
var ErrDecrypt = errors.New("export does not decrypt")

// IsExport reports whether data starts like an export.
func IsExport(data []byte) bool { return bytes.HasPrefix(data, []byte(magic)) }

// key derives the AES key from the secret as the server does.
func key(secret string) ([]byte, error) {
	return scrypt.Key([]byte(secret), []byte(salt), 16384, 8, 1, 32)
}

// Decode decrypts and inflates an export, returning its type and its JSON payload.
// Errors wrap ErrDamaged (not an export, an unknown version or type, a truncated
// file) or ErrDecrypt (a wrong secret or damaged ciphertext), each one sentence.
func Decode(data []byte, secret string) (Type, []byte, error) {
	if len(data) < headerSize || !IsExport(data) {
		return 0, nil, fmt.Errorf("%w: the file is not a Nodius export (it should start with NDEX and a 22-byte header)", ErrDamaged)
	}
	if v := data[4]; v != version {
		return 0, nil, fmt.Errorf("%w: export format version %d is not supported (only %d)", ErrDamaged, v, version)
	}
	t := Type(data[5])
	if t != Graph && t != HTMLGraph && t != NodeConfig {
		return 0, nil, fmt.Errorf("%w: unknown export type %d", ErrDamaged, data[5])
	}
	if len(data) > MaxFile {
		return 0, nil, fmt.Errorf("%w: the export is %d bytes, more than the %d a Nodius export holds", ErrDamaged, len(data), MaxFile)
	}
	iv, body := data[6:headerSize], data[headerSize:]
	if len(body) == 0 || len(body)%aes.BlockSize != 0 {
		return 0, nil, fmt.Errorf("%w: the encrypted part is %d bytes, not a whole number of AES blocks (truncated?)", ErrDamaged, len(body))
	}
	k, err := key(secret)
	if err != nil {
		return 0, nil, fmt.Errorf("deriving the export key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return 0, nil, fmt.Errorf("deriving the export key: %w", err)
	}
	plain := make([]byte, len(body))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, body)
	plain, ok := unpad(plain)
	if !ok {
		return 0, nil, ErrDecrypt
	}
	zr, err := zlib.NewReader(bytes.NewReader(plain))
	if err != nil { // a wrong key that happened to leave valid padding
		return 0, nil, ErrDecrypt
	}
	// Read as a stream that stops one byte past the bound.
	payload, err := io.ReadAll(io.LimitReader(zr, MaxPayload+1))
	if err != nil {
		return 0, nil, ErrDecrypt
	}
	if len(payload) > MaxPayload {
		return 0, nil, fmt.Errorf("%w: its payload inflates past %d MiB, more than a Nodius export holds", ErrDamaged, MaxPayload>>20)
	}
	return t, payload, nil
}

// Encode makes an export of payload (JSON) as the server does, with a fresh IV.
func Encode(payload []byte, t Type, secret string) ([]byte, error) {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(payload); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return EncodeCompressed(z.Bytes(), t, secret)
}

// EncodeCompressed makes an export of an already zlib-compressed payload: the
// encryption and header of Encode. Tests use it to make exports no server would.
func EncodeCompressed(compressed []byte, t Type, secret string) ([]byte, error) {
	k, err := key(secret)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	plain := pad(append([]byte(nil), compressed...))
	out := make([]byte, headerSize+len(plain))
	copy(out, magic)
	out[4], out[5] = version, byte(t)
	iv := out[6:headerSize]
	if _, err := rand.Read(iv); err != nil {
		return nil, err
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(out[headerSize:], plain)
	return out, nil
}

// pad adds PKCS#7 padding (what Node's cipher does by default).
func pad(b []byte) []byte {
	n := aes.BlockSize - len(b)%aes.BlockSize
	return append(b, bytes.Repeat([]byte{byte(n)}, n)...)
}

// unpad checks and removes PKCS#7 padding.
func unpad(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	n := int(b[len(b)-1])
	if n == 0 || n > aes.BlockSize || n > len(b) {
		return nil, false
	}
	for _, c := range b[len(b)-n:] {
		if int(c) != n {
			return nil, false
		}
	}
	return b[:len(b)-n], true
}
