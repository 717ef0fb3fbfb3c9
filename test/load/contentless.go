package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The contentless scenario (issue 31): chat spans without content and with
// no log events ever following, as the official OTel JS instrumentation
// sends them with content capture off, from several services, mixed with a
// few chat spans that carry their content. The collector runs llm_eval in a
// traces and a logs pipeline, so each content-less span may wait for its
// events; the waiting must never take an evaluation slot from a content span.
const (
	contentlessTick    = 100 * time.Millisecond
	contentlessLibrary = "@opentelemetry/instrumentation-openai"
	contentService     = "checkout-assistant"
	// contentlessDrain is how long after sending the scenario waits at most
	// for every span: the default max_wait (30 s) and cross_signal_wait
	// (10 s) of the collector.
	contentlessDrain = 40 * time.Second
)

// contentlessTraffic is the mix the sender keeps to.
type contentlessTraffic struct {
	perMinute  int // content-less chat spans per minute, over all services
	perSecond  int // chat spans with content per second
	services   int // services sending the content-less spans
	contentIDs map[[8]byte]struct{}
	contentN   int // content spans accepted by the collector
	lessN      int // content-less spans accepted
}

// runContentless sends the mix until ctx ends: every tick, the content-less
// and content spans due by then, each span its own trace.
func (s *sender) runContentless(ctx context.Context, mix *contentlessTraffic) {
	tick := time.NewTicker(contentlessTick)
	defer tick.Stop()
	start := time.Now()
	var lessDue, contentDue int // spans built so far, sent or rejected
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			elapsed := now.Sub(start).Seconds()
			less := int(elapsed*float64(mix.perMinute)/60) - lessDue
			content := int(elapsed*float64(mix.perSecond)) - contentDue
			lessDue += less
			contentDue += content
			td, lessIDs, contentIDs := s.contentlessBatch(mix.services, less, content)
			if err := s.post(td); err != nil {
				s.rejected += len(lessIDs) + len(contentIDs)
				continue
			}
			for _, id := range lessIDs {
				s.sent[id] = struct{}{}
			}
			for _, id := range contentIDs {
				s.sent[id] = struct{}{}
				mix.contentIDs[id] = struct{}{}
			}
			mix.lessN += len(lessIDs)
			mix.contentN += len(contentIDs)
			s.genAI += len(lessIDs) + len(contentIDs)
		}
	}
}

// contentlessBatch is one request: less content-less chat spans spread over
// the services, and content chat spans of their own service.
func (s *sender) contentlessBatch(services, less, content int) (ptrace.Traces, [][8]byte, [][8]byte) {
	td := ptrace.NewTraces()
	now := time.Now()
	var lessIDs, contentIDs [][8]byte
	for svc := 0; svc < services; svc++ {
		n := less / services
		if svc < less%services {
			n++
		}
		if n == 0 {
			continue
		}
		spans := chatResource(td, fmt.Sprintf("capture-off-%d", svc+1))
		for range n {
			s.seq++
			span := newSpan(spans, randomTraceID(), pcommon.NewSpanIDEmpty(), now, 800*time.Millisecond)
			contentlessChatSpan(span, s.seq)
			lessIDs = append(lessIDs, span.SpanID())
		}
	}
	if content > 0 {
		spans := chatResource(td, contentService)
		for range content {
			s.seq++
			span := newSpan(spans, randomTraceID(), pcommon.NewSpanIDEmpty(), now, 800*time.Millisecond)
			chatSpan(span, s.seq)
			contentIDs = append(contentIDs, span.SpanID())
		}
	}
	return td, lessIDs, contentIDs
}

// chatResource appends the spans of one service as the OpenAI
// instrumentation reports them.
func chatResource(td ptrace.Traces, service string) ptrace.SpanSlice {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutStr("deployment.environment.name", "load")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(contentlessLibrary)
	ss.Scope().SetVersion("0.22.0")
	return ss.Spans()
}

// contentlessChatSpan is a chat span as sent with content capture off:
// model, usage and response id, no messages.
func contentlessChatSpan(span ptrace.Span, seq int) {
	span.SetName("chat gpt-4o-mini")
	span.SetKind(ptrace.SpanKindClient)
	a := span.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.provider.name", "openai")
	a.PutStr("gen_ai.request.model", "gpt-4o-mini")
	a.PutStr("gen_ai.response.model", "gpt-4o-mini-2024-07-18")
	a.PutStr("gen_ai.response.id", fmt.Sprintf("chatcmpl-off-%d", seq))
	a.PutStr("gen_ai.response.finish_reasons", "stop")
	a.PutInt("gen_ai.usage.input_tokens", 388)
	a.PutInt("gen_ai.usage.output_tokens", 71)
	a.PutStr("server.address", "api.openai.com")
	a.PutInt("server.port", 443)
}

// Names of the waiting area's metrics on the telemetry endpoint.
const (
	metricSignalJoins    = "otelcol_processor_llm_eval_signal_joins"
	metricCaptureOff     = "otelcol_processor_llm_eval_content_capture_off"
	metricEventsWaiting  = "otelcol_processor_llm_eval_events_waiting"
	metricSpansUnscored  = "otelcol_processor_llm_eval_spans_unscored"
	metricEvaluationsAll = "otelcol_processor_llm_eval_evaluations"
)

// contentlessReport is what the contentless scenario measured.
type contentlessReport struct {
	perMinute, perSecond, services int
	captureOffAfter                int // -1: collector default
	lessSent, contentSent          int
	contentScored                  int            // content spans with every scorer scored
	contentUnscored                map[string]int // results on content spans without a score, by error.type
	joins                          map[string]float64
	captureOff                     float64 // services learned as capture off
	unscored                       map[string]float64
	waitingSeries                  []float64 // events_waiting every 5 s
}

// joinOutcomes are the signal_join outcomes the report lists.
var joinOutcomes = []string{"joined", "span_alone", "events_alone", "late_span", "late_events", "waiting_area_full", "content_capture_off"}

func printContentless(r report) {
	c := r.contentless
	if c == nil {
		return
	}
	offAfter := "default (50)"
	if c.captureOffAfter >= 0 {
		offAfter = fmt.Sprint(c.captureOffAfter)
	}
	fmt.Printf("contentless: %d content-less chat spans a minute from %d services and %d content chat spans a second for %s; content_capture_off_after %s\n",
		c.perMinute, c.services, c.perSecond, r.elapsedSending, offAfter)
	fmt.Printf("contentless: content spans sent %d, scored by every scorer %d, not: %d", c.contentSent, c.contentScored, c.contentSent-c.contentScored)
	if len(c.contentUnscored) > 0 {
		fmt.Printf(" (results without a score by error.type: %v)", c.contentUnscored)
	}
	fmt.Printf("; content-less spans sent %d\n", c.lessSent)
	var joins []string
	for _, o := range joinOutcomes {
		joins = append(joins, fmt.Sprintf("%s %.0f", o, c.joins[o]))
	}
	fmt.Printf("contentless: signal_joins %s; content_capture_off (services learned) %.0f; spans_unscored by reason %v\n",
		strings.Join(joins, ", "), c.captureOff, c.unscored)
	var waiting []string
	peak := 0.0
	for _, w := range c.waitingSeries {
		waiting = append(waiting, fmt.Sprintf("%.0f", w))
		peak = max(peak, w)
	}
	fmt.Printf("contentless: events_waiting peak %.0f, every 5 s: %s\n", peak, strings.Join(waiting, " "))
	first, last := windowMiB(r.rssSeries, true), windowMiB(r.rssSeries, false)
	fmt.Printf("contentless: RSS peak %.1f MiB (VmHWM); mean of the first minute %.1f MiB, of the last minute %.1f MiB\n",
		float64(r.peakRSS)/(1<<20), first, last)
}

// windowMiB is the mean RSS of the first or the last minute (12 samples
// of 5 s) of a series, in MiB.
func windowMiB(series []int64, first bool) float64 {
	n := min(12, len(series))
	if n == 0 {
		return 0
	}
	w := series[len(series)-n:]
	if first {
		w = series[:n]
	}
	var sum int64
	for _, b := range w {
		sum += b
	}
	return float64(sum) / float64(n) / (1 << 20)
}
