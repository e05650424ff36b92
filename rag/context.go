package rag

// Context is what retrieval hands to the prompt for one question: a small, relevant
// part of the graph (what the Nodius server's GraphRAGContext holds), plus the search
// ranking that chose it.
type Context struct {
	Graph   GraphInfo       `json:"graph"`
	Query   string          `json:"query"`
	Hits    []Hit           `json:"hits"`    // search ranking before expansion, best first
	Nodes   []ContextNode   `json:"nodes"`   // seeds first (by rank), then expansion order
	Edges   []ContextEdge   `json:"edges"`   // edges with both ends in Nodes
	Configs []ConfigSummary `json:"configs"` // configs of the custom types used by Nodes

	// Retrieval says how the context was built. It is for inspection, logs and
	// tests, never part of what the model sees.
	Retrieval RetrievalInfo `json:"-"`
}

// RetrievalInfo describes one retrieval run.
type RetrievalInfo struct {
	CacheHit   bool   // served from the context cache
	Fallback   bool   // nothing ranked and nothing was mentioned: the first nodes were taken
	Vector     bool   // embedding similarity took part in the ranking
	Server     bool   // ranked by the source's own text index (ArangoSearch); only the hits' part of the graph was read
	EmbedError string // why the vector half was skipped, when it failed (the question still got an answer)

	Expansion   []string // search terms the chat model added to the question (retrieval.expand)
	ExpandUsage Usage    // tokens the expansion call spent for this context; zero when none was made
	ExpandError string   // why the question was searched without expansion, when the call failed
}

// GraphInfo is the graph's metadata as the prompt shows it.
type GraphInfo struct {
	Key         string            `json:"_key"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Workspace   string            `json:"workspace"`
	Sheets      map[string]string `json:"sheets"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
}

// Hit is one search result: a node key and its fused score.
type Hit struct {
	Key   string  `json:"key"`
	Score float64 `json:"score"`
}

// HandleSummary is one side of a node's handles: "R:out(any)" style points.
type HandleSummary struct {
	Side   string   `json:"side"`
	Points []string `json:"points"` // e.g. "0:out(any)"
}

// ContextNode is a node condensed for the prompt: process and data truncated, sheet
// and type names resolved.
type ContextNode struct {
	Key         string          `json:"_key"`
	Type        string          `json:"type"`
	TypeName    string          `json:"typeName"` // config display name, or the type for built-ins
	Sheet       string          `json:"sheet"`
	SheetName   string          `json:"sheetName"`
	Process     string          `json:"process"`
	Handles     []HandleSummary `json:"handles"`
	DataSummary string          `json:"dataSummary"`
	// TypeCode says Process is the code of the node's type config (Nodius's model):
	// nodes of one type share it, so the prompt can show it once for the type. A node
	// whose code is its own (a built-in type, an earlier-format file) is false.
	TypeCode bool `json:"typeCode,omitempty"`
	// CodeUnknown says the node's type is neither built in nor defined by a config
	// here and the node carries no code: its code exists somewhere but cannot be
	// shown. An empty Process would read as "no code"; this says "unknown".
	CodeUnknown bool `json:"codeUnknown,omitempty"`
}

// ContextEdge is an edge condensed for the prompt.
type ContextEdge struct {
	Key          string `json:"_key"`
	Source       string `json:"source"`
	SourceHandle string `json:"sourceHandle"`
	Target       string `json:"target"`
	TargetHandle string `json:"targetHandle"`
	Label        string `json:"label"`
}

// ConfigSummary is a node type config condensed for the prompt.
type ConfigSummary struct {
	Key         string `json:"_key"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	Category    string `json:"category"`
	Icon        string `json:"icon"`
	Handles     string `json:"handlesSummary"` // "L:in(any), R:out(any)"
}
