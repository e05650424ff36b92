package arango

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/nodius/nodius-ai/internal/fault"
)

// classify turns a driver or network error into a *fault.Error whose message is one
// sentence saying what failed and what to do; the CLI prints it as is. what names the
// operation ("read graph demo"). The password never appears: the driver's URLs carry
// no credentials.
func (s *Source) classify(err error, what string) error {
	if err == nil {
		return nil
	}
	if _, ok := fault.As(err); ok {
		return err
	}
	where := s.cfg.Endpoint
	switch {
	case errors.Is(err, context.Canceled):
		return &fault.Error{Code: fault.Interrupted, Message: what + ": cancelled", Err: err}
	case errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err):
		return &fault.Error{Code: fault.Timeout, Retryable: true, Err: err,
			Message: fmt.Sprintf("ArangoDB at %s did not answer in time (%s) — check that the server is up and not overloaded, then retry", where, what)}
	}
	if ae, ok := asDriverError(err); ok {
		switch {
		case ae.Code == http.StatusUnauthorized:
			return &fault.Error{Code: fault.Auth, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("ArangoDB at %s rejected the credentials of user %q (401) — check USER:PASS in the arango:// URL", where, s.cfg.User)}
		case ae.Code == http.StatusForbidden:
			return &fault.Error{Code: fault.Auth, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("user %q may not access database %q on %s (403) — grant it access or use another user", s.cfg.User, s.cfg.Database, where)}
		case ae.ErrorNum == shared.ErrArangoDatabaseNotFound:
			return &fault.Error{Code: fault.Config, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("database %q does not exist on %s — check the database name in the arango:// URL", s.cfg.Database, where)}
		case ae.ErrorNum == shared.ErrArangoDataSourceNotFound:
			return &fault.Error{Code: fault.Config, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("a Nodius collection is missing in database %q (%s) — is this a Nodius database?", s.cfg.Database, ae.ErrorMessage)}
		case ae.Code >= 500:
			return &fault.Error{Code: fault.ServerError, Status: ae.Code, Retryable: true, Err: err,
				Message: fmt.Sprintf("ArangoDB at %s failed to %s (%d: %s) — retry, or look at the server's log", where, what, ae.Code, short(ae.ErrorMessage))}
		case ae.Code == http.StatusConflict || ae.ErrorNum == shared.ErrArangoUniqueConstraintViolated:
			return &fault.Error{Code: fault.InvalidRequest, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("ArangoDB refused to %s: a document with that key already exists (409)", what)}
		default:
			return &fault.Error{Code: fault.InvalidRequest, Status: ae.Code, Err: err,
				Message: fmt.Sprintf("ArangoDB refused to %s (%d: %s)", what, ae.Code, short(ae.ErrorMessage))}
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &fault.Error{Code: fault.Network, Retryable: false, Err: err,
			Message: fmt.Sprintf("cannot resolve ArangoDB host %q — check the host in the arango:// URL", dnsErr.Name)}
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("cannot connect to ArangoDB at %s (connection refused) — is the server running and the port right?", where)}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("the connection to ArangoDB at %s was cut (%s) — check that the server is up, then retry", where, what)}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return &fault.Error{Code: fault.Network, Retryable: true, Err: err,
			Message: fmt.Sprintf("cannot reach ArangoDB at %s (%v) — check the network and the arango:// URL", where, opErr.Err)}
	}
	if strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:") {
		return &fault.Error{Code: fault.Network, Err: err,
			Message: fmt.Sprintf("TLS with ArangoDB at %s failed (%v) — use arango:// for a plain server, or ?insecure=true for a self-signed certificate", where, short(err.Error()))}
	}
	return &fault.Error{Code: fault.Internal, Err: err,
		Message: fmt.Sprintf("ArangoDB: could not %s: %s", what, short(err.Error()))}
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// short keeps driver messages to one line of reasonable length.
func short(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\n", " "))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
