package arango

import (
	"context"
	"encoding/json"
)

// The tests live in package arango_test, because the fake server they drive
// (arangotest) imports this package. These names let them check what goes over the
// wire without exporting the query texts from the package itself.
const (
	QGraph        = qGraph
	QNodes        = qNodes
	QNodesSheet   = qNodesSheet
	QEdgesSheet   = qEdgesSheet
	QNode         = qNode
	QTraverseAny  = qTraverseAny
	QTraverseIn   = qTraverseIn
	QTraverseOut  = qTraverseOut
	QInsertNode   = qInsertNode
	QUpdateNode   = qUpdateNode
	QDeleteNode   = qDeleteNode
	QInsertEdge   = qInsertEdge
	QDeleteEdge   = qDeleteEdge
	QVectorExact  = qVectorExact
	QVectorApprox = qVectorApprox
	QTextSearch   = qTextSearch
	QConfigs      = qConfigs
)

// QueryEach runs a query through the cursor loop every read uses, for the tests of
// cursor closing.
func (s *Source) QueryEach(ctx context.Context, q string, bind map[string]any, fn func(raw json.RawMessage) error) error {
	return s.query(ctx, q, bind, fn)
}
