package file

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/nodius/nodius-ai/datasource/ndex"
	"github.com/nodius/nodius-ai/internal/filekind"
)

// MaxSize is the largest graph file this source reads (1 GiB): a 100,000-node
// graph is about 140 MB, so anything larger is almost surely not a graph, and
// reading it whole would exhaust memory before the parse could say so.
const MaxSize int64 = 1 << 30

// checkRegular says, in one sentence, why the file at real (shown as path) cannot
// be a graph file: missing, a directory, not a regular file (a device such as
// /dev/zero, a FIFO, a socket: reading one would never end or would block), or
// larger than MaxSize. It returns the file's information otherwise.
func checkRegular(path, real string) (fs.FileInfo, error) {
	st, err := os.Stat(real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("graph file %s does not exist: %w", path, err)
		}
		return nil, fmt.Errorf("graph file %s: %w", path, err)
	}
	return st, checkInfo(path, st)
}

func checkInfo(path string, st fs.FileInfo) error {
	switch {
	case st.IsDir():
		return fmt.Errorf("graph file %s is a directory", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("graph file %s is not a regular file (%s): give the path of a graph JSON file or a .ndex export", path, filekind.Name(st.Mode()))
	case st.Size() > MaxSize:
		return fmt.Errorf("graph file %s is %d bytes, more than the %d a graph file may hold", path, st.Size(), MaxSize)
	}
	return nil
}

// readRegular reads the regular file at real whole, refusing anything else, and
// never more than MaxSize bytes even when the file grows while it is read.
func readRegular(path, real string) ([]byte, fs.FileInfo, error) {
	if _, err := checkRegular(path, real); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, nil, fmt.Errorf("graph file %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat() // the file opened, which may not be the one checked
	if err != nil {
		return nil, nil, fmt.Errorf("graph file %s: %w", path, err)
	}
	if err := checkInfo(path, st); err != nil {
		return nil, nil, err
	}
	if st.Size() > ndex.MaxFile {
		// An export that large is not one the Nodius server made: refused before
		// it is read, decrypted and inflated.
		head := make([]byte, 4)
		if n, _ := io.ReadFull(f, head); ndex.IsExport(head[:n]) {
			return nil, nil, fmt.Errorf("graph file %s is a Nodius export of %d bytes, more than the %d an export holds: it is damaged or not made by a Nodius server", path, st.Size(), ndex.MaxFile)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, nil, fmt.Errorf("graph file %s: %w", path, err)
		}
	}
	// One allocation of the size Stat gave (plus the read that sees the end):
	// reading into a growing buffer allocated about twice the file.
	// make, not Buffer.Grow: a fresh large allocation comes zeroed from the
	// system, where Grow cleared all of it again (0.4 s for 136 MB here).
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, MaxSize+1))
	data := buf.Bytes()
	if err != nil {
		return nil, nil, fmt.Errorf("graph file %s: %w", path, err)
	}
	if int64(len(data)) > MaxSize {
		return nil, nil, fmt.Errorf("graph file %s grew past the %d bytes a graph file may hold while it was read", path, MaxSize)
	}
	return data, st, nil
}
