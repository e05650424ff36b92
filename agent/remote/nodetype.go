package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// NodeTypeApplier applies an approved node type change where the Nodius editor
// reads node types (the server: data source of the same server implements it).
//
// The server's assistant, once a configure_node_type is approved, sends no
// ai:apply_action: it writes the type itself, into a collection its own editor
// never reads (this server version's nodius_node_configs; the editor reads
// nodius_node_config). The change the person was shown is therefore applied from
// here, the way the web editor applies one, and read back before it is called
// applied.
type NodeTypeApplier interface {
	ApplyNodeType(ctx context.Context, graphKey string, p datasource.ConfigureNodeTypePayload) (datasource.ApplyResult, error)
}

// NodeTypePreparer is a NodeTypeApplier that takes the type's editing
// registration before the approval is sent, as a graph change does: if the server
// will not take this terminal as an editor of the type, nothing is approved and
// the proposal stays pending. The apply it returns is the change, made once the
// server has answered; release lets the registration go.
type NodeTypePreparer interface {
	NodeTypeApplier
	PrepareNodeType(ctx context.Context, graphKey string, p datasource.ConfigureNodeTypePayload) (apply func(context.Context) (datasource.ApplyResult, error), release func(), err error)
}

// prepareNodeType takes the registration an approved node type change needs
// before ai:resume is sent (see NodeTypePreparer); it returns what releases it.
func (ru *run) prepareNodeType(c *datasource.ConfigureNodeTypePayload) (release func(), err error) {
	np, ok := ru.r.applier.(NodeTypePreparer)
	if c == nil || !ok {
		return func() {}, nil
	}
	apply, release, err := np.PrepareNodeType(ru.ctx, ru.th.GraphKey, *c)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return func() {}, err
		}
		code := fault.Network
		if fe, ok := fault.As(err); ok {
			code = fe.Code
			if code == fault.Config || code == fault.Decision {
				code = fault.InvalidRequest // a runtime failure (exit 1), not a usage error
			}
		}
		return func() {}, &fault.Error{Code: code, Err: err, Message: fmt.Sprintf(
			"nothing was approved: the node type change could not be applied, because the Nodius server did not take this terminal as an editor of node type %s (%s); the proposal is still pending — approve it again once that is fixed",
			termtext.Strip(c.TypeKey), termtext.Strip(err.Error()))}
	}
	ru.typeApply = apply
	return release, nil
}

// applyNodeType applies p's approved node type change and says what became of it.
func (ru *run) applyNodeType(p *convo.Proposal) (*datasource.ApplyResult, string) {
	c := p.Action.ConfigureNodeType
	na, ok := ru.r.applier.(NodeTypeApplier)
	if c == nil || !ok {
		return &datasource.ApplyResult{}, "the server's assistant writes an approved node type where the Nodius editor does not read it, and this terminal has no connection to the server's node types to apply it — make the change in the web editor"
	}
	apply := func(ctx context.Context) (datasource.ApplyResult, error) {
		return na.ApplyNodeType(ctx, ru.th.GraphKey, *c)
	}
	if ru.typeApply != nil {
		apply = ru.typeApply
	}
	res, err := apply(ru.ctx)
	if err != nil {
		ru.r.log.Warn("remote node type apply failed", "thread", ru.th.ID, "type", c.TypeKey, "error", err.Error())
		return &datasource.ApplyResult{}, "the node type change was not applied: " + err.Error()
	}
	return &res, res.Note
}
