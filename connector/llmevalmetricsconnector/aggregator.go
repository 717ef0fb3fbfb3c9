package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// Names read from spans and events, and written to metrics.
const (
	attrOverflow = "otel.metric.overflow"

	labelError = "error"

	metricScore       = "gen_ai.evaluation.score"
	metricResults     = "gen_ai.evaluation.results"
	unitScore         = "1"
	unitResults       = "{result}"
	descScore         = "Scores of gen_ai.evaluation.result events that carry a score and no error."
	descResults       = "Number of gen_ai.evaluation.result events, by evaluation name and label."
	overflowSeriesKey = "\x00overflow"
)

// modelAttributes are the span attributes that name the evaluated model, in
// order of preference: GenAI request and response model, then the
// OpenInference and Vercel AI SDK spellings.
var modelAttributes = []string{"gen_ai.request.model", "gen_ai.response.model", "llm.model_name", "ai.model.id"}

// exemplar is one sampled result linking a data point to its span.
type exemplar struct {
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	time    pcommon.Timestamp
	score   float64
	scored  bool
}

// series is the cumulative state of one (resource, evaluation name, label,
// model) combination; it feeds one point of each metric.
type series struct {
	resource pcommon.Map
	attrs    pcommon.Map
	start    pcommon.Timestamp

	results uint64

	scores   uint64
	sum      float64
	min, max float64
	buckets  []uint64

	exemplars []exemplar
}

// aggregator keeps cumulative evaluation metrics. It is not safe for
// concurrent use; the connector serializes access.
type aggregator struct {
	cfg       *Config
	series    map[string]*series
	keyBuf    strings.Builder
	overflows uint64 // results counted in the overflow series
}

func newAggregator(cfg *Config) *aggregator {
	return &aggregator{cfg: cfg, series: make(map[string]*series)}
}

// consume adds every evaluation event of td and returns how many it read.
func (a *aggregator) consume(td ptrace.Traces, now pcommon.Timestamp) int {
	n := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		var resource pcommon.Map
		var resourceKey string
		haveResource := false
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				events := span.Events()
				for e := 0; e < events.Len(); e++ {
					ev := events.At(e)
					if ev.Name() != evalconv.EventName {
						continue
					}
					name, ok := stringAttr(ev.Attributes(), evalconv.AttrName)
					if !ok || name == "" {
						continue // the name is required; without it nothing can be attributed
					}
					if !haveResource {
						resource = a.filterResource(rs.Resource().Attributes())
						resourceKey = mapKey(resource)
						haveResource = true
					}
					a.add(resource, resourceKey, name, span, ev, now)
					n++
				}
			}
		}
	}
	return n
}

func (a *aggregator) add(resource pcommon.Map, resourceKey, name string, span ptrace.Span, ev ptrace.SpanEvent, now pcommon.Timestamp) {
	label, hasLabel := stringAttr(ev.Attributes(), evalconv.AttrScoreLabel)
	_, hasError := ev.Attributes().Get(evalconv.AttrErrorType)
	if (!hasLabel || label == "") && hasError {
		label, hasLabel = labelError, true
	}
	model, hasModel := spanModel(span.Attributes())

	a.keyBuf.Reset()
	a.keyBuf.WriteString(resourceKey)
	for _, part := range []string{name, label, model} {
		a.keyBuf.WriteByte(0)
		a.keyBuf.WriteString(part)
	}
	// Distinguish an absent label or model from an empty one.
	a.keyBuf.WriteByte(0)
	a.keyBuf.WriteString(strconv.FormatBool(hasLabel) + strconv.FormatBool(hasModel))
	key := a.keyBuf.String()

	s, ok := a.series[key]
	if !ok {
		if len(a.series) >= a.cfg.MaxSeries {
			s = a.overflowSeries(now)
			a.overflows++
		} else {
			attrs := pcommon.NewMap()
			attrs.PutStr(evalconv.AttrName, name)
			if hasLabel {
				attrs.PutStr(evalconv.AttrScoreLabel, label)
			}
			if hasModel {
				attrs.PutStr(evalconv.AttrRequestModel, model)
			}
			s = a.newSeries(resource, attrs, now)
			a.series[key] = s
		}
	}

	s.results++
	score, scored := scoreValue(ev.Attributes())
	if scored && !hasError {
		s.observe(score, a.cfg.Buckets)
	}
	if a.cfg.Exemplars.Enabled {
		ts := ev.Timestamp()
		if ts == 0 {
			ts = span.EndTimestamp()
		}
		s.exemplars = append(s.exemplars, exemplar{
			traceID: span.TraceID(), spanID: span.SpanID(), time: ts,
			score: score, scored: scored && !hasError,
		})
		if extra := len(s.exemplars) - a.cfg.Exemplars.MaxPerDataPoint; extra > 0 {
			s.exemplars = slices.Delete(s.exemplars, 0, extra) // keep the most recent
		}
	}
}

// overflowSeries returns the single series that counts results of series
// beyond max_series. It is kept outside the limit.
func (a *aggregator) overflowSeries(now pcommon.Timestamp) *series {
	if s, ok := a.series[overflowSeriesKey]; ok {
		return s
	}
	attrs := pcommon.NewMap()
	attrs.PutBool(attrOverflow, true)
	s := a.newSeries(pcommon.NewMap(), attrs, now)
	a.series[overflowSeriesKey] = s // one beyond max_series, by design
	return s
}

func (a *aggregator) newSeries(resource, attrs pcommon.Map, now pcommon.Timestamp) *series {
	return &series{
		resource: resource,
		attrs:    attrs,
		start:    now,
		min:      math.Inf(1),
		max:      math.Inf(-1),
		buckets:  make([]uint64, len(a.cfg.Buckets)+1),
	}
}

// observe adds a score. Buckets are (bounds[i-1], bounds[i]]; the last
// bucket holds scores above every bound.
func (s *series) observe(v float64, bounds []float64) {
	s.scores++
	s.sum += v
	s.min = math.Min(s.min, v)
	s.max = math.Max(s.max, v)
	s.buckets[sort.SearchFloat64s(bounds, v)]++
}

func (a *aggregator) filterResource(attrs pcommon.Map) pcommon.Map {
	out := pcommon.NewMap()
	if len(a.cfg.ResourceAttributes) == 0 {
		attrs.CopyTo(out)
		return out
	}
	for _, k := range a.cfg.ResourceAttributes {
		if v, ok := attrs.Get(k); ok {
			v.CopyTo(out.PutEmpty(k))
		}
	}
	return out
}

// build writes the cumulative state of every series into metrics, one
// ResourceMetrics per distinct resource, and resets the exemplars.
func (a *aggregator) build(scopeName string, now pcommon.Timestamp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	if len(a.series) == 0 {
		return md
	}
	keys := make([]string, 0, len(a.series))
	for k := range a.series {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable output: series of one resource are adjacent

	type scopeMetrics struct{ score, results pmetric.Metric }
	byResource := map[string]scopeMetrics{}
	for _, k := range keys {
		s := a.series[k]
		rk := mapKey(s.resource)
		sm, ok := byResource[rk]
		if !ok {
			rm := md.ResourceMetrics().AppendEmpty()
			s.resource.CopyTo(rm.Resource().Attributes())
			scope := rm.ScopeMetrics().AppendEmpty()
			scope.Scope().SetName(scopeName)
			sm.score = scope.Metrics().AppendEmpty()
			sm.score.SetName(metricScore)
			sm.score.SetDescription(descScore)
			sm.score.SetUnit(unitScore)
			sm.score.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			sm.results = scope.Metrics().AppendEmpty()
			sm.results.SetName(metricResults)
			sm.results.SetDescription(descResults)
			sm.results.SetUnit(unitResults)
			sum := sm.results.SetEmptySum()
			sum.SetIsMonotonic(true)
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			byResource[rk] = sm
		}

		dp := sm.results.Sum().DataPoints().AppendEmpty()
		s.attrs.CopyTo(dp.Attributes())
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(now)
		dp.SetIntValue(int64(s.results))
		for _, ex := range s.exemplars {
			e := dp.Exemplars().AppendEmpty()
			e.SetTimestamp(ex.time)
			e.SetTraceID(ex.traceID)
			e.SetSpanID(ex.spanID)
			e.SetIntValue(1)
		}

		if s.scores > 0 {
			hp := sm.score.Histogram().DataPoints().AppendEmpty()
			s.attrs.CopyTo(hp.Attributes())
			hp.SetStartTimestamp(s.start)
			hp.SetTimestamp(now)
			hp.SetCount(s.scores)
			hp.SetSum(s.sum)
			hp.SetMin(s.min)
			hp.SetMax(s.max)
			hp.ExplicitBounds().FromRaw(a.cfg.Buckets)
			hp.BucketCounts().FromRaw(s.buckets)
			for _, ex := range s.exemplars {
				if !ex.scored {
					continue
				}
				e := hp.Exemplars().AppendEmpty()
				e.SetTimestamp(ex.time)
				e.SetTraceID(ex.traceID)
				e.SetSpanID(ex.spanID)
				e.SetDoubleValue(ex.score)
			}
		}
		s.exemplars = s.exemplars[:0]
	}
	// Drop histogram metrics that got no points (resources with label-only results).
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		ms.RemoveIf(func(m pmetric.Metric) bool {
			return m.Type() == pmetric.MetricTypeHistogram && m.Histogram().DataPoints().Len() == 0
		})
	}
	return md
}

func stringAttr(attrs pcommon.Map, key string) (string, bool) {
	v, ok := attrs.Get(key)
	if !ok {
		return "", false
	}
	return v.AsString(), true // a string value as it is; others rendered
}

func spanModel(attrs pcommon.Map) (string, bool) {
	for _, k := range modelAttributes {
		if v, ok := stringAttr(attrs, k); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// scoreValue reads the score as a double; SDKs also send ints and numeric
// strings. NaN and infinities are not scores.
func scoreValue(attrs pcommon.Map) (float64, bool) {
	v, ok := attrs.Get(evalconv.AttrScoreValue)
	if !ok {
		return 0, false
	}
	var f float64
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		f = v.Double()
	case pcommon.ValueTypeInt:
		f = float64(v.Int())
	case pcommon.ValueTypeStr:
		parsed, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
		if err != nil {
			return 0, false
		}
		f = parsed
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// mapKey encodes attrs deterministically (sorted keys, typed values).
func mapKey(attrs pcommon.Map) string {
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v, _ := attrs.Get(k)
		b.WriteString(strconv.Quote(k))
		b.WriteByte('=')
		b.WriteString(v.Type().String())
		b.WriteByte(':')
		b.WriteString(strconv.Quote(v.AsString()))
		b.WriteByte(';')
	}
	return b.String()
}
