package remote

import (
	"context"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
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

// applyNodeType applies p's approved node type change and says what became of it.
func (ru *run) applyNodeType(p *convo.Proposal) (*datasource.ApplyResult, string) {
	c := p.Action.ConfigureNodeType
	na, ok := ru.r.applier.(NodeTypeApplier)
	if c == nil || !ok {
		return &datasource.ApplyResult{}, "the server's assistant writes an approved node type where the Nodius editor does not read it, and this terminal has no connection to the server's node types to apply it — make the change in the web editor"
	}
	res, err := na.ApplyNodeType(ru.ctx, ru.th.GraphKey, *c)
	if err != nil {
		ru.r.log.Warn("remote node type apply failed", "thread", ru.th.ID, "type", c.TypeKey, "error", err.Error())
		return &datasource.ApplyResult{}, "the node type change was not applied: " + err.Error()
	}
	return &res, res.Note
}
