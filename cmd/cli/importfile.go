package cli

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/filekind"
	"github.com/nodius/nodius-ai/threads"
)

// readDocument reads the thread document threads import was given: a regular file
// of at most threads.MaxDocumentSize bytes, or standard input ("-"). The file is
// opened without blocking, so a named pipe is refused at once instead of waiting
// for a writer that may never come; standard input is read while Ctrl-C and
// SIGTERM (ctx) can still end the command.
func readDocument(ctx context.Context, in io.Reader, arg string) (threads.Document, error) {
	name := "standard input"
	r := in
	if arg != "-" {
		name = arg
		// O_NONBLOCK: opening a FIFO for reading returns at once; on a regular
		// file it changes nothing.
		file, err := os.OpenFile(arg, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return threads.Document{}, usageError("cannot read %s: there is no such file", arg)
			}
			return threads.Document{}, usageError("cannot read %s: %v", arg, errors.Unwrap(err))
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil {
			return threads.Document{}, usageError("cannot read %s: %v", arg, errors.Unwrap(err))
		}
		switch {
		case st.IsDir():
			return threads.Document{}, usageError("%s is a directory: give the path of a thread document (json, as threads export writes it), or - for standard input", arg)
		case !st.Mode().IsRegular():
			return threads.Document{}, usageError("%s is not a regular file (%s): give the path of a thread document, or - to read standard input", arg, filekind.Name(st.Mode()))
		case st.Size() > threads.MaxDocumentSize:
			return threads.Document{}, usageError("%s is %d bytes, more than the %d a thread document may hold", arg, st.Size(), threads.MaxDocumentSize)
		}
		r = file
	}
	type parsed struct {
		doc threads.Document
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		doc, err := threads.ParseDocument(r)
		done <- parsed{doc, err}
	}()
	var p parsed
	select {
	case p = <-done:
	case <-ctx.Done():
		return threads.Document{}, &fault.Error{Code: fault.Interrupted, Message: "stopped while reading " + name, Err: ctx.Err()}
	}
	if p.err != nil {
		if errors.Is(p.err, threads.ErrInvalid) {
			return threads.Document{}, usageError("%s: %v", name, p.err)
		}
		return threads.Document{}, p.err
	}
	return p.doc, nil
}
