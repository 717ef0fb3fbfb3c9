package scorers

import (
	"fmt"
	"slices"
	"time"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/checks"
	"github.com/llm-eval/llm_eval/scoring/criteria"
	"github.com/llm-eval/llm_eval/scoring/guard"
	"github.com/llm-eval/llm_eval/scoring/taskcompletion"
)

// Spec says which scorer to build: a built-in scorer by Name, a criteria
// scorer (Criteria) or a checks scorer (Rules, or the name checks).
type Spec struct {
	// Name is a built-in scorer's name (Names), or the name a criteria or
	// checks scorer reports its results under (scoring.CheckName).
	Name string
	// Criteria, when set, makes a criteria scorer of this criterion,
	// named Name.
	Criteria *criteria.Config
	// Rules, when set, make a checks scorer of these rules, named Name;
	// the name checks makes one too.
	Rules []checks.Rule
	// Options tune the scorer. A checks scorer reads only Scale,
	// Threshold and StrictMode: it sees the output as it is, unredacted,
	// since no_pii must see what redaction hides.
	Options scoring.Options
}

// kind is what Build makes of a spec: a built-in scorer, a criteria
// scorer or a checks scorer.
func (s Spec) kind() string {
	switch {
	case s.Criteria != nil:
		return scoring.Criteria
	case s.Rules != nil || s.Name == scoring.Checks:
		return scoring.Checks
	}
	return ""
}

// Validate reports the first problem of the spec's name and settings,
// starting with the key at fault (name, criteria, steps, fields, verdict,
// rules::N::...), as Build would. It does not check Options.
func (s Spec) Validate() error {
	switch s.kind() {
	case scoring.Criteria:
		if err := s.criteria().Validate(); err != nil {
			return err
		}
		return scoring.CheckName(s.Name, Names()...)
	case scoring.Checks:
		if s.Name != scoring.Checks {
			if err := scoring.CheckName(s.Name, Names()...); err != nil {
				return err
			}
		}
		_, err := checks.NewNamed(s.Name, s.Rules, scoring.Options{})
		return err
	}
	if !slices.Contains(Names(), s.Name) {
		return unknown(s.Name)
	}
	return nil
}

// criteria returns the spec's criterion, named Name.
func (s Spec) criteria() criteria.Config {
	c := *s.Criteria
	c.Name = s.Name
	return c
}

// Builder builds scorers from specs. The scorers of one Builder ask its
// judge and share one task_completion requirement lister with its cache,
// so the runs of one request are measured against one list of
// requirements. It is not safe for concurrent use; the scorers it builds
// are.
type Builder struct {
	judge        scoring.Judge
	requirements *guard.RequirementCache // made with the first task_completion scorer
}

// NewBuilder returns a Builder of scorers that ask judge. A Builder with a
// nil judge builds checks scorers only.
func NewBuilder(judge scoring.Judge) *Builder { return &Builder{judge: judge} }

// Bounds of the requirement cache, one per Builder. Each entry is at most
// 20 short requirements of one request; an agent serves many distinct
// requests, so entries are many and small.
const (
	requirementCacheSize = 4096
	requirementCacheTTL  = time.Hour
)

// Build returns the scorer spec describes. Its errors are the scorer
// package's: they name the setting at fault.
func (b *Builder) Build(spec Spec) (scoring.Scorer, error) {
	switch spec.kind() {
	case scoring.Criteria:
		if err := scoring.CheckName(spec.Name, Names()...); err != nil {
			return nil, fmt.Errorf("criteria scorer: %w", err)
		}
		return criteria.New(spec.criteria(), b.judge, spec.Options)
	case scoring.Checks:
		if spec.Name != scoring.Checks {
			if err := scoring.CheckName(spec.Name, Names()...); err != nil {
				return nil, err
			}
		}
		return checks.NewNamed(spec.Name, spec.Rules, spec.Options)
	}
	opts := spec.Options
	if spec.Name == scoring.TaskCompletion && opts.Requirements == nil && b.judge != nil {
		if b.requirements == nil {
			lister, err := taskcompletion.NewRequirementLister(b.judge)
			if err != nil {
				return nil, err
			}
			if b.requirements, err = guard.NewRequirementCache(lister, guard.CacheConfig{Size: requirementCacheSize, TTL: requirementCacheTTL}); err != nil {
				return nil, err
			}
		}
		opts.Requirements = b.requirements
	}
	return New(spec.Name, b.judge, opts)
}
