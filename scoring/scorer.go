package scoring

import (
	"context"
	"fmt"
	"regexp"
	"slices"
)

// Scorer evaluates one Case. Score never panics and never returns an error:
// failures are results with LabelError and a typed Err. A Scorer is safe
// for concurrent use.
type Scorer interface {
	Name() string
	Score(ctx context.Context, c Case) Result
}

// The built-in scorers' names, which their results carry
// (gen_ai.evaluation.name). The scorers package builds each by its name.
const (
	Bias             = "bias"
	Hallucination    = "hallucination"
	PromptAlignment  = "prompt_alignment"
	TaskCompletion   = "task_completion"
	ToolUse          = "tool_use"
	AnswerRelevancy  = "answer_relevancy"
	ContextRelevance = "context_relevance"
	Toxicity         = "toxicity"

	// The conversation scorers judge a whole conversation (Case.Turns).
	ConversationCompleteness = "conversation_completeness"
	KnowledgeRetention       = "knowledge_retention"
	RoleAdherence            = "role_adherence"
	ConversationRelevancy    = "conversation_relevancy"
)

// The kinds of scorer that run under a configured name: Criteria, one
// custom criterion judged by the LLM (package criteria), and Checks,
// deterministic rules with no judge call (package checks), whose default
// name it also is.
const (
	Criteria = "criteria"
	Checks   = "checks"
)

var configuredName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// CheckName reports a name a configured scorer (criteria, named checks)
// cannot report results under: not lowercase letters, digits and
// underscores starting with a letter, or the name of a kind of scorer or
// one of reserved (the built-in scorers' names), which telemetry could not
// tell apart from it. Its errors start with the key, name.
func CheckName(name string, reserved ...string) error {
	switch {
	case !configuredName.MatchString(name):
		return fmt.Errorf("name: %q must be lowercase letters, digits and underscores, starting with a letter", name)
	case name == Criteria || name == Checks || slices.Contains(reserved, name):
		return fmt.Errorf("name: %q is a built-in scorer name; choose another", name)
	}
	return nil
}
