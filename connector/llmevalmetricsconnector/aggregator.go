package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/llm-eval/llm_eval/internal/evalconv"
)

// Names written to metrics.
const (
	attrOverflow = "otel.metric.overflow"

	labelError = "error"

	// The labels of the llm_eval processor's outcomes. A set (resource,
	// evaluation name, model, agent) that reports one of them gets a series
	// for each, at zero until it happens.
	labelPass        = "pass"
	labelFail        = "fail"
	labelNotScorable = "not_scorable"

	metricScore   = "gen_ai.evaluation.score"
	metricResults = "gen_ai.evaluation.results"
	unitScore     = "1"
	unitResults   = "{result}"
	descScore     = "Scores of gen_ai.evaluation.result events that carry a score and no error."
	descResults   = "Number of gen_ai.evaluation.result events, by evaluation name and label."
)

// exemplar is one sampled result linking a data point to its span.
type exemplar struct {
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	time    pcommon.Timestamp
	score   float64
	scored  bool
}

// seriesKey identifies a series by the hashes of its resource and its data
// point attributes (attrHasher).
type seriesKey struct {
	resource [16]byte
	attrs    [16]byte
}

// outcomeLabels are the labels a set's series are created for together.
var outcomeLabels = []string{labelPass, labelFail, labelNotScorable, labelError}

func isOutcomeLabel(label string) bool {
	return slices.Contains(outcomeLabels, label)
}

// outcomeSet is what the series of one set's outcome labels share: the
// time any of them last counted a result, so that they expire together.
type outcomeSet struct {
	lastSeen pcommon.Timestamp
}

// series is the cumulative state of one (resource, evaluation name, label,
// model, agent name) combination; it feeds one point of each metric.
type series struct {
	resource     pcommon.Map
	resourceHash [16]byte
	attrs        pcommon.Map
	start        pcommon.Timestamp
	lastSeen     pcommon.Timestamp

	results uint64

	scores   uint64
	sum      float64
	min, max float64
	buckets  []uint64

	exemplars []exemplar

	// set is shared by the outcome-label series of one set; nil otherwise.
	set *outcomeSet
	// count and hist hold the count, and the histogram, at zero when they
	// are first exported: Prometheus' increase() and rate() count nothing
	// for a series' first sample, so a first sample that is already
	// non-zero would be lost.
	count, hist zeroHold
}

// zeroHold exports a new value at zero, from its first export until
// new_series_hold has passed, so that a scrape less frequent than the
// flush sees the zero before the value.
type zeroHold struct {
	since pcommon.Timestamp // the first export, at zero; 0 until then
}

// held reports whether the value is exported at zero by the build at now:
// always by the first build, and until hold has passed since, except by
// the final build.
func (z *zeroHold) held(now pcommon.Timestamp, hold time.Duration, final bool) bool {
	first := z.since == 0
	if first {
		z.since = now
	}
	return !final && (first || now.AsTime().Sub(z.since.AsTime()) < hold)
}

// resultResource is the resource of one ResourceSpans or ResourceLogs,
// filtered and hashed once, when its first result is added.
type resultResource struct {
	src   pcommon.Map
	attrs pcommon.Map
	hash  [16]byte
	ready bool
}

// aggregator keeps cumulative evaluation metrics. It is not safe for
// concurrent use; the connector serializes access.
type aggregator struct {
	cfg         *Config
	series      map[seriesKey]*series
	scratch     pcommon.Map // data point attributes of the result being added
	overflowKey seriesKey
	hasher      *attrHasher
	// counted is the number of series, the overflow series aside, that
	// have counted a result: what max_series limits. The zero series of a
	// set's other outcomes come on top, at most three per set.
	counted int
}

func newAggregator(cfg *Config) *aggregator {
	overflowAttrs := pcommon.NewMap()
	overflowAttrs.PutBool(attrOverflow, true)
	hasher := newAttrHasher()
	return &aggregator{
		cfg:         cfg,
		series:      make(map[seriesKey]*series),
		scratch:     pcommon.NewMap(),
		overflowKey: seriesKey{resource: hasher.hash(pcommon.NewMap()), attrs: hasher.hash(overflowAttrs)},
		hasher:      hasher,
	}
}

// add counts one result and reports whether it went to the overflow series.
// Results without an evaluation name are skipped: nothing can be attributed.
func (a *aggregator) add(res *resultResource, ev evaluation, now pcommon.Timestamp) (overflowed bool) {
	name, ok := stringAttr(ev.attrs, evalconv.AttrName)
	if !ok || name == "" {
		return false
	}
	if !res.ready {
		res.attrs = a.filterResource(res.src)
		res.hash = a.hasher.hash(res.attrs)
		res.ready = true
	}
	label, hasLabel := stringAttr(ev.attrs, evalconv.AttrScoreLabel)
	_, hasError := ev.attrs.Get(evalconv.AttrErrorType)
	if (!hasLabel || label == "") && hasError {
		label, hasLabel = labelError, true
	}

	a.scratch.Clear()
	a.scratch.PutStr(evalconv.AttrName, name)
	if hasLabel {
		a.scratch.PutStr(evalconv.AttrScoreLabel, label)
	}
	if ev.hasModel {
		a.scratch.PutStr(evalconv.AttrRequestModel, ev.model)
	}
	if ev.hasAgent {
		a.scratch.PutStr(evalconv.AttrAgentName, ev.agent)
	}
	// The judge model, so that a score change after a judge change shows
	// as a new series rather than as a change of the application.
	if jm, ok := stringAttr(ev.attrs, evalconv.AttrJudgeModel); ok && jm != "" {
		a.scratch.PutStr(evalconv.AttrJudgeModel, jm)
	}
	key := seriesKey{resource: res.hash, attrs: a.hasher.hash(a.scratch)}

	s, ok := a.series[key]
	if !ok {
		if a.counted >= a.cfg.MaxSeries {
			s = a.overflowSeries(now)
			overflowed = true
		} else {
			attrs := pcommon.NewMap()
			a.scratch.CopyTo(attrs)
			s = a.newSeries(res.attrs, res.hash, attrs, now)
			a.series[key] = s
			if hasLabel && isOutcomeLabel(label) {
				a.addOutcomeSiblings(res, s, label, now)
			}
		}
	}

	if s.results == 0 && !overflowed {
		a.counted++
	}
	s.results++
	s.lastSeen = now
	if s.set != nil {
		s.set.lastSeen = now
	}
	score, scored := scoreValue(ev.attrs)
	if scored && !hasError {
		s.observe(score, a.cfg.Buckets)
	}
	if a.cfg.Exemplars.Enabled {
		s.exemplars = append(s.exemplars, exemplar{
			traceID: ev.traceID, spanID: ev.spanID, time: ev.time,
			score: score, scored: scored && !hasError,
		})
		if extra := len(s.exemplars) - a.cfg.Exemplars.MaxPerDataPoint; extra > 0 {
			s.exemplars = slices.Delete(s.exemplars, 0, extra) // keep the most recent
		}
	}
	return overflowed
}

// addOutcomeSiblings creates, at zero, the series of the other outcome
// labels of s's set that do not exist yet, and gives them all one
// outcomeSet. a.scratch holds s's attributes.
func (a *aggregator) addOutcomeSiblings(res *resultResource, s *series, label string, now pcommon.Timestamp) {
	var set *outcomeSet
	for _, other := range outcomeLabels {
		if other == label {
			continue
		}
		a.scratch.PutStr(evalconv.AttrScoreLabel, other)
		sib, ok := a.series[seriesKey{resource: res.hash, attrs: a.hasher.hash(a.scratch)}]
		if ok && sib.set != nil {
			set = sib.set
			break
		}
	}
	if set == nil {
		set = &outcomeSet{}
	}
	set.lastSeen = now
	s.set = set
	for _, other := range outcomeLabels {
		if other == label {
			continue
		}
		a.scratch.PutStr(evalconv.AttrScoreLabel, other)
		key := seriesKey{resource: res.hash, attrs: a.hasher.hash(a.scratch)}
		if _, ok := a.series[key]; ok {
			continue
		}
		attrs := pcommon.NewMap()
		a.scratch.CopyTo(attrs)
		sib := a.newSeries(res.attrs, res.hash, attrs, now)
		sib.set = set
		a.series[key] = sib
	}
	a.scratch.PutStr(evalconv.AttrScoreLabel, label)
}

// overflowSeries returns the single series that counts results of series
// beyond max_series. It is kept outside the limit.
func (a *aggregator) overflowSeries(now pcommon.Timestamp) *series {
	if s, ok := a.series[a.overflowKey]; ok {
		return s
	}
	attrs := pcommon.NewMap()
	attrs.PutBool(attrOverflow, true)
	s := a.newSeries(pcommon.NewMap(), a.overflowKey.resource, attrs, now)
	a.series[a.overflowKey] = s // one beyond max_series, by design
	return s
}

func (a *aggregator) newSeries(resource pcommon.Map, resourceHash [16]byte, attrs pcommon.Map, now pcommon.Timestamp) *series {
	return &series{
		resource:     resource,
		resourceHash: resourceHash,
		attrs:        attrs,
		start:        now,
		lastSeen:     now,
		min:          math.Inf(1),
		max:          math.Inf(-1),
		buckets:      make([]uint64, len(a.cfg.Buckets)+1),
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

// expire drops the series no result has updated for longer than
// metrics_expiration (never when it is 0) and returns how many it dropped.
// A result of a dropped series later starts it afresh, with a new start
// time, which backends read as a counter reset.
func (a *aggregator) expire(now pcommon.Timestamp) int {
	if a.cfg.MetricsExpiration <= 0 {
		return 0
	}
	n := 0
	for k, s := range a.series {
		last := s.lastSeen
		if s.set != nil {
			last = s.set.lastSeen // a set's outcome series go together
		}
		if now.AsTime().Sub(last.AsTime()) > a.cfg.MetricsExpiration {
			if s.results > 0 && k != a.overflowKey {
				a.counted--
			}
			delete(a.series, k)
			n++
		}
	}
	return n
}

// build writes the cumulative state of every series into metrics, one
// ResourceMetrics per distinct resource, and resets the exemplars sent.
// A series' count, and its histogram, are written at zero by their first
// build and until new_series_hold has passed since, and with their values
// from then on, unless final (the last build, at shutdown), which writes
// every value as it is.
func (a *aggregator) build(scopeName string, now pcommon.Timestamp, final bool) pmetric.Metrics {
	md := pmetric.NewMetrics()
	if len(a.series) == 0 {
		return md
	}
	keys := slices.Collect(maps.Keys(a.series))
	// Stable output: series of one resource are adjacent.
	slices.SortFunc(keys, func(x, y seriesKey) int {
		return cmp.Or(bytes.Compare(x.resource[:], y.resource[:]), bytes.Compare(x.attrs[:], y.attrs[:]))
	})

	type scopeMetrics struct{ score, results pmetric.Metric }
	byResource := map[[16]byte]scopeMetrics{}
	for _, k := range keys {
		s := a.series[k]
		rk := s.resourceHash
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

		countHeld := s.count.held(now, a.cfg.NewSeriesHold, final)
		dp := sm.results.Sum().DataPoints().AppendEmpty()
		s.attrs.CopyTo(dp.Attributes())
		dp.SetStartTimestamp(s.start)
		dp.SetTimestamp(now)
		if !countHeld {
			dp.SetIntValue(int64(s.results))
			for _, ex := range s.exemplars {
				e := dp.Exemplars().AppendEmpty()
				e.SetTimestamp(ex.time)
				e.SetTraceID(ex.traceID)
				e.SetSpanID(ex.spanID)
				e.SetIntValue(1)
			}
		}

		histHeld := false
		if s.scores > 0 {
			histHeld = s.hist.held(now, a.cfg.NewSeriesHold, final)
			hp := sm.score.Histogram().DataPoints().AppendEmpty()
			s.attrs.CopyTo(hp.Attributes())
			hp.SetStartTimestamp(s.start)
			hp.SetTimestamp(now)
			hp.ExplicitBounds().FromRaw(a.cfg.Buckets)
			if histHeld {
				hp.BucketCounts().FromRaw(make([]uint64, len(s.buckets)))
			} else {
				hp.SetCount(s.scores)
				hp.SetSum(s.sum)
				hp.SetMin(s.min)
				hp.SetMax(s.max)
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
		}
		if !countHeld && !histHeld {
			s.exemplars = s.exemplars[:0] // held ones go with the values
		}
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
