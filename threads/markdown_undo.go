package threads

import "github.com/nodius/nodius-ai/agent/convo"

// undo writes an undo in the transcript: when it happened and what it reversed.
func (md *mdWriter) undo(m convo.Message) {
	md.printf("\n## Undone · %s\n\n", when(m.CreatedAt))
	md.text(m.Content)
}
