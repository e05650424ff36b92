package llm

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"
)

// RetryOptions tune WithRetry. Zero values take the defaults in brackets.
type RetryOptions struct {
	MaxAttempts int           // attempts in all, first included [3]
	BaseDelay   time.Duration // first backoff [1s], doubled each attempt, ±25 % jitter
	MaxDelay    time.Duration // backoff cap [20s]; a Retry-After is honoured up to MaxRetryAfter
	// Sleep waits d or until ctx ends (tests pass a fake) [a timer].
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry is told before each wait, so the agent can show "retrying in 4s".
	OnRetry func(attempt int, delay time.Duration, err *fault.Error)
}

// WithRetry retries p's transient failures (rate limits, server errors, timeouts,
// network) with exponential backoff and jitter, honouring Retry-After — but only
// while no delta of the attempt has reached onDelta: once a token was shown, a
// retry would repeat it, so the error goes back to the user instead.
func WithRetry(p Provider, o RetryOptions) Provider {
	return &retrying{p: p, o: o.withDefaults()}
}

type retrying struct {
	p Provider
	o RetryOptions
}

func (r *retrying) Name() string  { return r.p.Name() }
func (r *retrying) Model() string { return r.p.Model() }

func (r *retrying) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	var reply Reply
	err := r.o.run(ctx, func() (bool, error) {
		shown := false
		var err error
		reply, err = r.p.Stream(ctx, req, func(d Delta) {
			shown = true
			if onDelta != nil {
				onDelta(d)
			}
		})
		return !shown, err
	})
	return reply, err
}

// Attempts is how many attempts a call gets in all, first included.
func (o RetryOptions) Attempts() int { return o.withDefaults().MaxAttempts }

// withDefaults fills the zero fields with the defaults in brackets.
func (o RetryOptions) withDefaults() RetryOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = time.Second
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 20 * time.Second
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	return o
}

// run calls attempt until it succeeds, fails for good, or the attempts run out.
// attempt also says whether its failure may be retried at all: a stream that
// already showed a token may not, whatever the error.
func (o RetryOptions) run(ctx context.Context, attempt func() (mayRetry bool, err error)) error {
	for n := 1; ; n++ {
		mayRetry, err := attempt()
		if err == nil {
			return nil
		}
		ce, ok := fault.As(err)
		if !ok || !ce.Retryable || !mayRetry || n >= o.MaxAttempts || ctx.Err() != nil {
			return err
		}
		delay := backoff(n, o.BaseDelay, o.MaxDelay)
		if ce.RetryAfter > 0 {
			delay = min(ce.RetryAfter, MaxRetryAfter)
		}
		if o.OnRetry != nil {
			o.OnRetry(n, delay, ce)
		}
		if serr := o.Sleep(ctx, delay); serr != nil {
			return &fault.Error{Code: fault.Interrupted, Message: "stopped while waiting to retry", Err: serr}
		}
	}
}

// backoff is base·2^(attempt-1), capped, with ±25 % jitter so that many clients
// rate-limited together do not come back together.
func backoff(attempt int, base, maxDelay time.Duration) time.Duration {
	d := base << (attempt - 1)
	if d <= 0 || d > maxDelay {
		d = maxDelay
	}
	j := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
	return max(d+j, 0)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
