package subject // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/subject"

// Scorer is what a subject needs to know of one configured scorer: which
// items it applies to, where its context comes from and what it reads.
// The processor builds one per configured scorer.
type Scorer struct {
	Name string
	// Generation and Agent are its targets: LLM call spans, agent or root
	// spans.
	Generation, Agent bool
	// Instructions are its own instructions; without them it takes the
	// call's system instructions when UseSystemInstructions is set.
	Instructions          []string
	UseSystemInstructions bool
	// ContextPresent (when.context_present): it is skipped without context.
	ContextPresent bool
	// Its context_sources: tool results in the call's input, documents of
	// the trace, the call's system messages.
	FromToolMessages, FromTrace, FromSystem bool
	// ReadsContext: it judges the answer against retrieved context.
	ReadsContext bool
	// ReadsTrajectory: it judges an agent run's trajectory.
	ReadsTrajectory bool
}

// appliesTo says whether the scorer scores an item (an agent span, else a
// generation) whose per-scorer include/exclude left out the excluded
// scorers. A scorer that does not apply writes neither a result nor a
// marker.
func (s Scorer) appliesTo(agent bool, excluded map[string]bool) bool {
	if excluded[s.Name] {
		return false
	}
	if agent {
		return s.Agent
	}
	return s.Generation
}
