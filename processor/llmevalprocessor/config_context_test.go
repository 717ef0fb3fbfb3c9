package llmevalprocessor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/tracecontext"
)

// contextKeys is how the proposed keys sit in Config and ScorerConfig.
type contextKeys struct {
	TraceContext     TraceContextConfig `mapstructure:"trace_context"`
	SpanFilterConfig `mapstructure:",squash"`
	Scorers          []scorerKeys `mapstructure:"scorers"`
}

type scorerKeys struct {
	Name            string `mapstructure:"name"`
	ScorerSelection `mapstructure:",squash"`
}

func decodeContextKeys(t *testing.T, conf *confmap.Conf) contextKeys {
	t.Helper()
	cfg := contextKeys{TraceContext: defaultTraceContextConfig()}
	require.NoError(t, conf.Unmarshal(&cfg))
	for i := range cfg.Scorers {
		if cfg.Scorers[i].Targets == nil {
			cfg.Scorers[i].Targets = defaultScorerSelection().Targets
		}
	}
	return cfg
}

func TestContextConfigDecodes(t *testing.T) {
	conf, err := confmaptest.LoadConf(filepath.Join("testdata", "tracecontext", "config.yaml"))
	require.NoError(t, err)
	cfg := decodeContextKeys(t, conf)

	assert.Equal(t, TraceContextConfig{MaxTraces: 500, MaxBytes: 1 << 20, TTL: 30 * time.Second, Scope: "trace", ContextWait: time.Second}, cfg.TraceContext)
	assert.Empty(t, cfg.TraceContext.validate())
	assert.Equal(t, tracecontext.ScopeTrace, cfg.TraceContext.scope())
	ic := cfg.TraceContext.indexConfig()
	require.NoError(t, ic.Validate())
	assert.Equal(t, int64(1<<20), ic.MaxTraceBytes, "a trace may use at most max_bytes")

	assert.Equal(t, SpanFilterConfig{
		Include: []AttributeMatchConfig{
			{Resource: map[string]ValueMatchConfig{"service.name": {Equals: "checkout"}}},
			{
				Resource: map[string]ValueMatchConfig{"service.name": {Regexp: "^support-"}},
				Span:     map[string]ValueMatchConfig{"gen_ai.agent.name": {Equals: "triage"}},
			},
		},
		Exclude: []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.request.model": {Regexp: `^gpt-3\.`}}}},
	}, cfg.SpanFilterConfig)
	_, err = cfg.SpanFilterConfig.compile()
	require.NoError(t, err)

	require.Len(t, cfg.Scorers, 2)
	h := cfg.Scorers[0]
	assert.Equal(t, []string{"generation", "agent"}, h.Targets)
	assert.True(t, h.hasTarget(targetAgent))
	assert.True(t, h.When.ContextPresent)
	assert.Empty(t, h.validate())
	b := cfg.Scorers[1]
	assert.Equal(t, []string{"generation"}, b.Targets, "default target")
	assert.False(t, b.hasTarget(targetAgent))
	assert.False(t, b.When.ContextPresent)
	assert.Empty(t, b.validate())
}

func TestTraceContextConfigValidate(t *testing.T) {
	good := defaultTraceContextConfig()
	require.Empty(t, good.validate())
	tests := []struct {
		name   string
		mutate func(*TraceContextConfig)
		want   string
	}{
		{"max_traces", func(c *TraceContextConfig) { c.MaxTraces = 0 }, "max_traces: must be at least 1"},
		{"max_bytes", func(c *TraceContextConfig) { c.MaxBytes = -1 }, "max_bytes: must be positive"},
		{"ttl", func(c *TraceContextConfig) { c.TTL = 0 }, "ttl: must be at least 1ms, got 0s"},
		{"scope", func(c *TraceContextConfig) { c.Scope = "parent" }, `scope: "parent" is not one of siblings, trace`},
		{"negative wait", func(c *TraceContextConfig) { c.ContextWait = -time.Second }, "context_wait: must be at least 1ms, got -1s (or 0 for no wait)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := defaultTraceContextConfig()
			tt.mutate(&c)
			errs := c.validate()
			require.Len(t, errs, 1)
			assert.Contains(t, errs[0].Error(), tt.want)

			// As the collector checks it: the section's path comes first.
			cfg := createDefaultConfig().(*Config)
			cfg.Judge.ClientConfig.Endpoint, cfg.Judge.Model = "http://judge.internal/v1", "m"
			cfg.TraceContext = c
			err := confmap.Validate(cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "trace_context: "+tt.want)
		})
	}
}

func TestScorerSelectionValidate(t *testing.T) {
	tests := []struct {
		name string
		sel  ScorerSelection
		want []string
	}{
		{"no targets", ScorerSelection{Targets: []string{}}, []string{"targets: must name at least one"}},
		{"unknown target", ScorerSelection{Targets: []string{"generation", "tool"}}, []string{`targets[1]: "tool" is not one of generation, agent`}},
		{"duplicate target", ScorerSelection{Targets: []string{"agent", "agent"}}, []string{`targets[1]: duplicate target "agent"`}},
		{"bad regexp", ScorerSelection{Targets: []string{"agent"}, SpanFilterConfig: SpanFilterConfig{
			Include: []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"gen_ai.agent.name": {Regexp: "(unclosed"}}}},
		}}, []string{`include[0].span["gen_ai.agent.name"].regexp: error parsing regexp`}},
		{"both equals and regexp", ScorerSelection{Targets: []string{"agent"}, SpanFilterConfig: SpanFilterConfig{
			Exclude: []AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"service.name": {Equals: "a", Regexp: "b"}}}},
		}}, []string{`exclude[0].resource["service.name"]: set equals or regexp, not both`}},
		{"no value", ScorerSelection{Targets: []string{"agent"}, SpanFilterConfig: SpanFilterConfig{
			Exclude: []AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"service.name": {}}}},
		}}, []string{`exclude[0].resource["service.name"]: needs a value`}},
		{"empty entry", ScorerSelection{Targets: []string{"agent"}, SpanFilterConfig: SpanFilterConfig{
			Include: []AttributeMatchConfig{{}},
		}}, []string{"include[0]: must list at least one resource or span attribute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.sel.validate()
			require.Len(t, errs, len(tt.want))
			for i, want := range tt.want {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

func TestSpanFilterMatches(t *testing.T) {
	span := func(service string, attrs map[string]any) (res, own pcommon.Map) {
		res = pcommon.NewMap()
		if service != "" {
			res.PutStr("service.name", service)
		}
		own = pcommon.NewMap()
		require.NoError(t, own.FromRaw(attrs))
		return res, own
	}
	filter := SpanFilterConfig{
		Include: []AttributeMatchConfig{
			{Resource: map[string]ValueMatchConfig{"service.name": {Equals: "checkout"}}},
			{
				Resource: map[string]ValueMatchConfig{"service.name": {Regexp: "^support-"}},
				Span:     map[string]ValueMatchConfig{"gen_ai.agent.name": {Equals: "triage"}},
			},
		},
		Exclude: []AttributeMatchConfig{
			{Span: map[string]ValueMatchConfig{"gen_ai.request.model": {Regexp: `^gpt-3\.`}}},
			{Span: map[string]ValueMatchConfig{"llm_eval.test": {Equals: "true"}}},
		},
	}
	f, err := filter.compile()
	require.NoError(t, err)
	require.False(t, f.empty())
	tests := []struct {
		name    string
		service string
		attrs   map[string]any
		want    bool
	}{
		{"included service", "checkout", nil, true},
		{"exact match is not a prefix match", "checkout-v2", nil, false},
		{"regexp service and exact span attribute", "support-eu", map[string]any{"gen_ai.agent.name": "triage"}, true},
		{"all attributes of an entry must match", "support-eu", map[string]any{"gen_ai.agent.name": "billing"}, false},
		{"missing attribute matches nothing", "support-eu", nil, false},
		{"no service", "", map[string]any{"gen_ai.agent.name": "triage"}, false},
		{"excluded model", "checkout", map[string]any{"gen_ai.request.model": "gpt-3.5-turbo"}, false},
		{"regexp is unanchored only where written", "checkout", map[string]any{"gen_ai.request.model": "my-gpt-3.5"}, true},
		{"non-string attribute compared as text", "checkout", map[string]any{"llm_eval.test": true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, s := span(tt.service, tt.attrs)
			assert.Equal(t, tt.want, f.matches(res, s))
		})
	}

	// rulesOut decides by the resource alone, only where no item attribute
	// could change the answer.
	exclService, err := SpanFilterConfig{
		Include: filter.Include,
		Exclude: append([]AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"service.name": {Equals: "support-test"}}}}, filter.Exclude...),
	}.compile()
	require.NoError(t, err)
	for _, tt := range []struct {
		service string
		want    bool
	}{
		{"checkout", false},    // included by resource
		{"support-eu", false},  // included if the item's agent is triage
		{"billing", true},      // no include entry can match
		{"", true},             // no service at all
		{"support-test", true}, // excluded by resource alone
	} {
		res, _ := span(tt.service, nil)
		assert.Equal(t, tt.want, exclService.rulesOut(res), "service %q", tt.service)
	}

	none, err := SpanFilterConfig{}.compile()
	require.NoError(t, err)
	assert.True(t, none.empty())
	res, s := span("", nil)
	assert.True(t, none.matches(res, s), "no filter lets everything through")
	assert.False(t, none.rulesOut(res))

	onlyExclude, err := SpanFilterConfig{Exclude: filter.Exclude}.compile()
	require.NoError(t, err)
	res, s = span("anything", map[string]any{"gen_ai.request.model": "gpt-4o"})
	assert.True(t, onlyExclude.matches(res, s), "without include, only excludes apply")
	assert.False(t, onlyExclude.rulesOut(res), "excludes on item attributes need the item")
}

func TestFilterErrorsNameEveryBadKey(t *testing.T) {
	_, err := SpanFilterConfig{
		Include: []AttributeMatchConfig{{Span: map[string]ValueMatchConfig{"a": {Regexp: "["}, "b": {Regexp: "("}}}},
		Exclude: []AttributeMatchConfig{{Resource: map[string]ValueMatchConfig{"": {Equals: "x"}}}},
	}.compile()
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{`include[0].span["a"].regexp`, `include[0].span["b"].regexp`, "exclude[0].resource: attribute key must not be empty"} {
		assert.True(t, strings.Contains(msg, want), "missing %q in %q", want, msg)
	}
}

func TestContextWaitCappedAtMaxWait(t *testing.T) {
	c := defaultTraceContextConfig()
	assert.Equal(t, 2*time.Second, c.effectiveWait(30*time.Second))
	assert.Equal(t, 5*time.Millisecond, c.effectiveWait(5*time.Millisecond), "a short max_wait caps the default context_wait")
	c.ContextWait = 0
	assert.Zero(t, c.effectiveWait(time.Second), "0 turns waiting off")
}

// The trace context index the processor builds by default is the one the
// index's fixtures test (internal/tracecontext).
func TestDefaultIndexConfig(t *testing.T) {
	assert.Equal(t, tracecontext.Config{MaxTraces: 10_000, MaxBytes: 64 << 20, TTL: 2 * time.Minute,
		MaxDocumentBytes: 32 << 10, MaxTraceBytes: 4 << 20}, defaultTraceContextConfig().indexConfig())
}
