package tui

// GraphChangedMsg says that another editor changed the graph while the chat
// follows it live (a Nodius server source): the header says so until the next
// question, which is answered on the graph with that change.
type GraphChangedMsg struct{}

// changedByOthers is what the header adds while the graph changed since the last
// question.
const changedByOthers = "graph changed by others since your last question"

// setChanged sets whether the header says the graph changed since the last question.
func (h *header) setChanged(on bool) {
	if h.changed != on {
		h.changed, h.cacheW = on, 0
	}
}

// changedNote is the header's part saying the graph changed ("" when it did not).
func (h *header) changedNote() string {
	if !h.changed {
		return ""
	}
	return h.lk.th.warn.Render(" · " + changedByOthers)
}
