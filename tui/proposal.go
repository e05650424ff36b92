package tui

import (
	"context"
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
)

// This file holds a proposal's life in the chat: the dialog opens on it, the
// decision resumes the agent, the outcome settles the transcript's "waiting" line.
// The dialog itself is in dialog.go, its scrolling in scroll.go.

// openProposal makes p the pending proposal and opens the dialog on it.
func (m *Model) openProposal(p *convo.Proposal) {
	cp := *p
	m.pending = &cp
	m.asked = m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "⚑ proposed: " + describeAction(cp) + " — waiting for your decision"})
	m.dlg = newProposalDialog(m.lk, cp, m.sheets, m.opts.Source, m.now())
	m.st.state = phaseWaitingApproval
}

// pendingLoadedMsg carries the thread's pending proposal, read again after a
// decision that did not go through.
type pendingLoadedMsg struct {
	threadID string
	p        *convo.Proposal
}

// reloadPending reads the pending proposal again (a command: no I/O in Update).
func (m *Model) reloadPending() tea.Cmd {
	ts, id := m.opts.Threads, m.threadID
	if ts == nil || id == "" {
		return nil
	}
	return func() tea.Msg {
		p, err := ts.PendingProposal(context.Background(), id)
		if err != nil {
			return nil
		}
		return pendingLoadedMsg{threadID: id, p: p}
	}
}

func (m *Model) onPendingLoaded(msg pendingLoadedMsg) {
	if msg.threadID != m.threadID || msg.p == nil || m.run != nil {
		return
	}
	cp := *msg.p
	m.pending = &cp
	m.asked = m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: "⚑ proposed: " + describeAction(cp) + " — waiting for your decision (ctrl+p to review it)"})
	m.st.state = phaseWaitingApproval
}

// settleAsked turns the "waiting for your decision" line into a plain record of
// what was proposed.
func (m *Model) settleAsked(p convo.Proposal) {
	if m.asked == nil {
		return
	}
	if n, ok := m.asked.it.(*noticeItem); ok {
		n.text = "⚑ proposed: " + describeAction(p)
		m.tr.touch(m.asked)
	}
	m.asked = nil
}

// decisionOutcome shows what became of a decided proposal, once it is known.
func (m *Model) decisionOutcome(p convo.Proposal, result string) {
	var r struct {
		Note string `json:"note"`
	}
	if result == "" && p.Result != nil {
		// The outcome came without its tool result (the server's assistant): the
		// note recorded with it (e.g. the key of a graph it created) is said all the same.
		r.Note = p.Result.Note
	} else {
		_ = json.Unmarshal([]byte(result), &r)
	}
	kind, text := outcomeText(p.Decision, p.Outcome, describeAction(p), p.Feedback, p.ApplyError, r.Note)
	if p.Decision == convo.Approved && p.Outcome == convo.Applied && m.deciding != nil && m.decided.ID == p.ID && m.decidedAlways {
		text += " (and every " + describeAction(p) + " in this thread)"
	}
	if m.deciding != nil && m.decided.ID == p.ID {
		n := m.deciding.it.(*noticeItem)
		n.kind, n.text = kind, text
		m.tr.touch(m.deciding)
		m.deciding = nil
		return
	}
	m.tr.add(&noticeItem{lk: m.lk, kind: kind, text: text})
}

// decidedNotice is the line a reopened thread shows for a decided proposal, from
// its stored decision and outcome.
func decidedNotice(lk *look, p convo.Proposal) *noticeItem {
	kind, text := outcomeText(p.Decision, p.Outcome, describeAction(p), p.Feedback, p.ApplyError, "")
	return &noticeItem{lk: lk, kind: kind, text: text}
}

// outcomeText is the line a decided proposal gets: applied (✓), approved but not
// applied (!, with why), rejected (×, with the feedback). Never a success mark for
// a change that did not happen. note (the tool result's: the key of a created
// graph, say) follows an applied change.
func outcomeText(d convo.DecisionState, o convo.Outcome, what, feedback, applyErr, note string) (noticeKind, string) {
	if note != "" {
		note = " — " + strip(note)
	}
	switch {
	case d == convo.Rejected:
		text := "× rejected " + what
		if feedback != "" {
			text += ": " + strip(feedback)
		}
		return nRejected, text
	case o == convo.Applied:
		return nDecision, "✓ approved and applied: " + what + note
	case o == convo.Claimed:
		return nInfo, "… approved, being applied: " + what
	}
	return nError, "! approved but not applied: " + what + ": " + strip(applyErr)
}

func describeAction(p convo.Proposal) string {
	return strings.ReplaceAll(string(p.Action.Type), "_", " ")
}

// decide resumes the agent with the user's decision on the proposal the dialog
// showed: the decision carries that proposal's id and digest, so if another one is
// pending by now nothing is decided. The line in the transcript says "deciding"
// until the outcome is known.
func (m *Model) decide(d convo.Decision) tea.Cmd {
	m.dlg = nil
	if m.pending == nil || m.run != nil {
		return nil
	}
	p := *m.pending
	if d.ProposalID == "" {
		d.ProposalID, d.Digest = p.ID, p.Digest
	}
	m.pending = nil
	m.settleAsked(p)
	verdict := "… approving " + describeAction(p)
	if !d.Approved {
		verdict = "… rejecting " + describeAction(p)
		if d.Feedback != "" {
			verdict += ": " + strip(d.Feedback)
		}
	}
	m.decided, m.decidedAlways, m.decidedApproved, m.decidedFeedback = p, d.AlwaysForThread, d.Approved, d.Feedback
	m.deciding = m.tr.add(&noticeItem{lk: m.lk, kind: nInfo, text: verdict})
	m.tr.toBottom()
	if m.opts.Runner == nil {
		m.showError(m.opts.ConfigErr)
		return nil
	}
	threadID := m.threadID
	if threadID == "" {
		threadID = p.ThreadID
	}
	return m.start(func(ctx context.Context, e func(convo.Event)) (agent.Result, error) {
		return m.opts.Runner.Resume(ctx, threadID, d, e)
	})
}

// sideBySide is the width from which the proposal dialog sits beside the
// conversation rather than over its lower part.
const sideBySide = 150

// proposalLayout keeps the conversation readable while a change is decided (a
// proposal, or the undo of an applied one): the dialog beside it on a wide terminal,
// else over its lower part with the end of the conversation (the assistant's
// explanation, the change being undone) above.
func (m *Model) proposalLayout(d dialog, w, h int) string {
	if w >= sideBySide {
		dw := min(100, w/2)
		tw := w - dw - 1
		left := lipgloss.NewStyle().Width(tw).Render(strings.Join(m.tr.window(tw, h), "\n"))
		right := lipgloss.Place(dw, h, lipgloss.Center, lipgloss.Bottom, d.Render(dw, h))
		return clipHeight(lipgloss.JoinHorizontal(lipgloss.Top, left, " ", right), h)
	}
	// The dialog takes its natural height when the conversation keeps 3 lines or
	// more above it; else it gets at least 12 lines, and all of a small terminal
	// (40×18), where reading the change comes first.
	keep := 0
	if nat := strings.Count(d.Render(w, h), "\n") + 1; nat+3 <= h {
		keep = h - nat
	} else if h >= 18 {
		keep = min(max(3, h/4), h-12)
	}
	box := d.Render(w, h-keep)
	bh := strings.Count(box, "\n") + 1
	box = lipgloss.PlaceHorizontal(w, lipgloss.Center, box)
	if bh >= h {
		return clipHeight(box, h)
	}
	return strings.Join(m.tr.window(w, h-bh), "\n") + "\n" + box
}
