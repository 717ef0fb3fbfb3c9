package evalstore // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/evalstore"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/logjoin"
	"github.com/llm-eval/llm_eval/scoring"
)

// Scorer is one configured scorer: what the store runs, and the plain
// facts of its configuration that subjects read to decide whether it
// applies and to build its case. The processor builds one per configured
// scorer.
type Scorer struct {
	Name string
	Run  scoring.Scorer
	// Generation, Agent and Conversation are its targets: LLM call spans,
	// agent or root spans, whole conversations.
	Generation, Agent, Conversation bool
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

// Waits reports whether the scorer's evaluation waits while its item
// waits (context_wait): a scorer that reads context waits for it, one that
// judges a trajectory for the agent run's steps.
func (s Scorer) Waits() bool { return s.ReadsContext || s.ReadsTrajectory }

// AppliesTo reports whether the scorer scores an item (an agent span, else
// a generation) whose per-scorer include/exclude left out the excluded
// scorers. A scorer that does not apply writes neither a result nor a
// marker.
func (s Scorer) AppliesTo(agent bool, excluded map[string]bool) bool {
	if excluded[s.Name] {
		return false
	}
	if agent {
		return s.Agent
	}
	return s.Generation
}

// Subject is what an item evaluates and where its results go: a held span,
// a call read from log events, or a Pair of both.
type Subject interface {
	// Case builds what one scorer evaluates. The store calls it when it
	// dispatches the evaluation, not at admission, so the case can use
	// what arrived in between.
	Case(sc Scorer) scoring.Case
	// Skips reports whether the scorer does not apply to the subject (its
	// include, exclude or when): its result is skipped, not run.
	Skips(sc Scorer) bool
	// Leave sends the item on with one result per scorer, in scorer
	// order. An evaluation that had not finished has a marker result
	// (error.type max_wait_exceeded, shutdown or restarted). The store
	// calls it exactly once, without its lock held.
	Leave(ctx context.Context, results []Result)
	// Late takes a result that finished after Leave. It may run at the
	// same time as Leave and as other Late calls.
	Late(ctx context.Context, r Result)
}

// UpFronter is a subject that has some scorers' results before any call,
// such as not_scorable for content it lacks.
type UpFronter interface {
	ResultUpFront(sc Scorer) (scoring.Result, bool)
}

// ContextWaiter is a subject that may wait for its trace's context (or,
// for an agent span, the steps of its run) before the evaluations of the
// scorers that wait are dispatched (trace_context.context_wait).
type ContextWaiter interface {
	// WaitsForContext reports the trace whose context the item needs and
	// whether it still waits for it. The store calls it with its lock held.
	WaitsForContext() (pcommon.TraceID, bool)
}

// Pairable is a subject that can be one half of a call seen on both
// signals: a span, or the call read from its log events.
type Pairable interface {
	Subject
	// NewPair returns the subject of its call, holding it as the half
	// that came first.
	NewPair() Pair
}

// Pair is the subject of a call seen on both signals: the half that came
// first, joined by the other when it comes. One evaluation serves both.
type Pair interface {
	Subject
	// Join takes a half.
	Join(half Subject)
	// Call is the call's key, the halves the pair has, and whether, with
	// one half only, it waits for the other before it is evaluated (a span
	// without content of its own, or log events without their span).
	Call() (key logjoin.Key, sides Side, waits bool)
}

// Journal is what the store tells storage. A failed write is the
// journal's to count; the item stays in memory.
type Journal interface {
	// Admitted queues a subject just admitted, before its evaluations are
	// dispatched, and returns its id (0: not stored). Called with the
	// store's lock held: it only queues, never waiting for a write.
	Admitted(s Subject, admitted time.Time) uint64
	// Rewritten queues the record of an item that took in the other half
	// of its call in place of the one before, and returns its id. Called
	// with the store's lock held; it only queues.
	Rewritten(id uint64, s Subject, admitted time.Time) uint64
	// Finished queues a result of a stored item that still waits for
	// others.
	Finished(id uint64, r Result)
	// Left removes an item that has been sent on.
	Left(id uint64)
}

// Observer is told what the store does, for telemetry.
type Observer interface {
	// Result: a result was filed (not a skip).
	Result(ctx context.Context, r Result)
	// Unscored: an item left without any score, and why (Reason*).
	Unscored(ctx context.Context, reason string)
	// ContextWaitEnded: an item stopped waiting for context; arrived
	// says whether the context came.
	ContextWaitEnded(ctx context.Context, arrived bool)
	// SignalJoined: how a call seen on both signals ended (Join*).
	SignalJoined(ctx context.Context, outcome string)
	// EventsMissed: a span of the service, written by the library, waited
	// in vain for its log events; learned says that the service's spans
	// stop waiting now, none having come for EventWaits.LearnAfter spans
	// in a row.
	EventsMissed(ctx context.Context, service, library string, learned bool)
	// Recovered: an item found in storage was resumed or forwarded.
	Recovered(ctx context.Context, outcome string)
}
