// Package scorers lists the scorers of scoring, one line per scorer, and
// builds them: Build is the one way from a Spec to a Scorer, which the
// llm_eval processor and the llmeval command both take.
package scorers

import (
	"fmt"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/answerrelevancy"
	"github.com/llm-eval/llm_eval/scoring/bias"
	"github.com/llm-eval/llm_eval/scoring/contextrelevance"
	"github.com/llm-eval/llm_eval/scoring/conversationcompleteness"
	"github.com/llm-eval/llm_eval/scoring/conversationrelevancy"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/hallucination"
	"github.com/llm-eval/llm_eval/scoring/instructions"
	"github.com/llm-eval/llm_eval/scoring/knowledgeretention"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
	"github.com/llm-eval/llm_eval/scoring/promptalignment"
	"github.com/llm-eval/llm_eval/scoring/roleadherence"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
	"github.com/llm-eval/llm_eval/scoring/tooluse"
	"github.com/llm-eval/llm_eval/scoring/toxicity"
)

// builtIn are the scorers built by name, in the order Names lists them.
// Adding a scorer is adding its folder and its line here.
var builtIn = []pipeline.Definition{
	bias.Definition,
	hallucination.Definition,
	promptalignment.Definition,
	taskcompletion.Definition,
	tooluse.Definition,
	answerrelevancy.Definition,
	contextrelevance.Definition,
	toxicity.Definition,
	conversationcompleteness.Definition,
	knowledgeretention.Definition,
	roleadherence.Definition,
	conversationrelevancy.Definition,
}

// Names returns the names of the built-in scorers, which New builds, in a
// fixed order.
func Names() []string {
	return names(func(pipeline.Definition) bool { return true })
}

// ContextNames returns the names of the built-in scorers that judge a
// Case's Context and find a Case without one not scorable.
func ContextNames() []string {
	return names(func(d pipeline.Definition) bool { return d.NeedsContext })
}

// TrajectoryNames returns the names of the built-in scorers that judge an
// agent run's Trajectory and find a Case without one not scorable.
func TrajectoryNames() []string {
	return names(func(d pipeline.Definition) bool { return d.Trajectory })
}

// ConversationNames returns the names of the built-in scorers that judge
// a whole conversation (Case.Turns, see scoring.Case.Conversation): the
// processor runs them once per conversation, when it ends, and never on
// one generation.
func ConversationNames() []string {
	return names(func(d pipeline.Definition) bool { return d.Conversation })
}

func names(keep func(pipeline.Definition) bool) []string {
	var out []string
	for _, d := range builtIn {
		if keep(d) {
			out = append(out, d.Name)
		}
	}
	return out
}

// Definition returns the definition of the built-in scorer name.
func Definition(name string) (pipeline.Definition, bool) {
	for _, d := range builtIn {
		if d.Name == name {
			return d, true
		}
	}
	return pipeline.Definition{}, false
}

// New returns the built-in scorer name (one of Names) asking judge, as
// its package's New does. It reports an unknown name, a nil judge and
// invalid options.
func New(name string, judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	d, ok := Definition(name)
	if !ok {
		return nil, unknown(name)
	}
	return pipeline.New(d, judge, opts)
}

// unknown is the error of a name no built-in scorer has.
func unknown(name string) error {
	return fmt.Errorf("unknown scorer %q: want one of %s", name, strings.Join(Names(), ", "))
}

// Prompts returns the prompt sets of every scorer, of the criteria
// scorers and of the instruction split.
func Prompts() []*pipeline.Prompts {
	out := make([]*pipeline.Prompts, 0, len(builtIn)+2)
	for _, d := range builtIn {
		out = append(out, d.Prompts)
	}
	return append(out, criteria.Prompts(), instructions.Prompts())
}

// DemoReply is the reply of the offline demo judge (scoringtest) to a
// request for the reply named name: a value of that reply's shape, built
// by string heuristics, never a judgement. It reports false for a name no
// prompt has.
func DemoReply(name string, req scoring.Request) (any, bool) {
	for _, set := range Prompts() {
		if p := set.Lookup(name); p != nil && p.Demo != nil {
			return p.Demo(req), true
		}
	}
	return nil, false
}
