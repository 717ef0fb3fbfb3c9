package configcheck

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
)

type judgeSection struct {
	Endpoint string `mapstructure:"endpoint"`
	APIKey   string `mapstructure:"api_key"`
	Model    string `mapstructure:"model"`
}

type Common struct {
	Threshold float64 `mapstructure:"threshold"`
}

type scorerEntry struct {
	Common `mapstructure:",squash"`
	Name   string `mapstructure:"name"`
}

type config struct {
	Judge    judgeSection                          `mapstructure:"judge"`
	Fallback configoptional.Optional[judgeSection] `mapstructure:"fallback"`
	Scorers  []scorerEntry                         `mapstructure:"scorers"`
	Labels   map[string]string                     `mapstructure:"labels"`
	Ignored  string                                `mapstructure:"-"`
}

func TestUnknownKeys(t *testing.T) {
	typ := reflect.TypeFor[config]()
	tests := []struct {
		name string
		raw  map[string]any
		want []string // one line per stray key; nil: none
	}{
		{"every key known", map[string]any{
			"judge":    map[string]any{"endpoint": "e", "api_key": "k"},
			"fallback": map[string]any{"enabled": true, "model": "m"},
			"scorers":  []any{map[string]any{"name": "bias", "threshold": 0.5}},
			"labels":   map[string]any{"anything": "goes"},
		}, nil},
		{"a typo is named by its whole path with the key meant", map[string]any{
			"judge": map[string]any{"modle": "m"},
		}, []string{"judge::modle: unknown key (did you mean model?)"}},
		{"another client's name for a key", map[string]any{
			"judge": map[string]any{"base_url": "e"},
		}, []string{"judge::base_url: unknown key (did you mean endpoint?)"}},
		{"inside a list entry and a squashed field's neighbour", map[string]any{
			"scorers": []any{map[string]any{"name": "bias"}, map[string]any{"treshold": 0.5}},
		}, []string{"scorers::1::treshold: unknown key (did you mean threshold?)"}},
		{"inside an optional section", map[string]any{
			"fallback": map[string]any{"enabled": true, "endpont": "e"},
		}, []string{"fallback::endpont: unknown key (did you mean endpoint?)"}},
		{"far from every key: the known keys are listed", map[string]any{
			"judge": map[string]any{"zzzzzzzz": 1},
		}, []string{"judge::zzzzzzzz: unknown key (known keys here: api_key, endpoint, model)"}},
		{"a field tagged - takes no key", map[string]any{
			"ignored": "x",
		}, []string{"ignored: unknown key (known keys here: fallback, judge, labels, scorers)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := UnknownKeys(tt.raw, typ)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			var got []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				got = append(got, e.Error())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestJoinFields(t *testing.T) {
	assert.NoError(t, JoinFields(nil))
	a, b := errors.New("max_wait: too short"), errors.New("queue_size: too big")
	err := JoinFields([]error{a, b})
	assert.EqualError(t, err, "max_wait: too short; queue_size: too big", "one line, so the collector's key prefix reads on every problem")
	assert.ErrorIs(t, err, b)
}

func TestNotOneOf(t *testing.T) {
	assert.EqualError(t, NotOneOf("sumary", "llm", "summary"), `"sumary" is not one of llm, summary (did you mean summary?)`)
	assert.EqualError(t, NotOneOf("zzzzzz", "llm", "summary"), `"zzzzzz" is not one of llm, summary`)
}

func TestMisspeltScorer(t *testing.T) {
	tests := map[string]string{
		"bias":             "",     // a built-in scorer
		"biass":            "bias", // a typo
		"halucination":     "hallucination",
		"turn_relevancy":   "conversation_relevancy", // deepeval's name
		"politeness_check": "",                       // a custom criteria scorer
	}
	for name, want := range tests {
		assert.Equal(t, want, MisspeltScorer(name), name)
	}
}
