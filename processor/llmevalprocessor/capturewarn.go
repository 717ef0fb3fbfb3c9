package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llm-eval/llm_eval/processor/llmevalprocessor/internal/genai"
)

// captureWarnWindow is how long the services and libraries found without
// content after a warning are gathered before they are named together in
// one line. The Collector samples its log by message (by default the
// first 10 lines of one message per 10s, then one in 100:
// service::telemetry::logs::sampling), so one warning line per service
// would be dropped from the 11th service on; one line of each message per
// window never is.
const captureWarnWindow = 5 * time.Second

// What came without content, in the warning (captureWarnings.warn).
const (
	warnSpans         = "generation spans arrive without message content"
	warnSpansNoEvents = "generation spans arrive without message content and no GenAI log events of their calls follow"
	warnEvents        = "GenAI log events arrive without message content"
)

// maxCaptureWarned bounds the (service, library) pairs remembered as
// warned; beyond it nothing more is logged.
const maxCaptureWarned = 1024

// captureWarnings logs that generation spans or GenAI log events of a
// service arrive without content, naming each service and library once
// with how to turn content capture on. The first one is named at once;
// those found in the window after it are named together in one line at
// its end, and so on while new ones come. stop names those still waiting.
type captureWarnings struct {
	logger *zap.Logger
	window time.Duration

	mu      sync.Mutex
	warned  map[[2]string]bool
	pending []captureSource // found since the last line
	timer   *time.Timer     // set while a window is open
	stopped bool
}

// captureSource is one service and library sending content-less calls,
// and what came without content (warnSpans, warnSpansNoEvents,
// warnEvents).
type captureSource struct {
	service, library, what string
}

// MarshalLogObject writes the source as an object of the warning line.
func (s captureSource) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("service", s.service)
	enc.AddString("library", s.library)
	enc.AddString("what", s.what)
	return nil
}

// warn names the service and library unless they were named: at once
// when no window is open, else in the line that ends the window.
func (w *captureWarnings) warn(service, library, what string) {
	w.mu.Lock()
	key := [2]string{service, library}
	if w.warned[key] || len(w.warned) >= maxCaptureWarned || w.stopped {
		w.mu.Unlock()
		return
	}
	if w.warned == nil {
		w.warned = make(map[[2]string]bool)
	}
	w.warned[key] = true
	src := captureSource{service: service, library: library, what: what}
	if w.timer != nil {
		w.pending = append(w.pending, src)
		w.mu.Unlock()
		return
	}
	w.timer = time.AfterFunc(w.windowLen(), w.endWindow)
	w.mu.Unlock()
	w.logger.Warn("llm_eval: "+what+", so they are not_scorable: content capture is off; to turn it on, "+genai.CaptureHint(library)+
		" (logged once per service and library)", zap.String("service", service), zap.String("library", library))
}

// endWindow names the sources found during the window that ends, and
// opens the next one when there were any.
func (w *captureWarnings) endWindow() {
	w.mu.Lock()
	batch := w.pending
	w.pending = nil
	if len(batch) == 0 || w.stopped {
		w.timer = nil
		w.mu.Unlock()
		return
	}
	w.timer = time.AfterFunc(w.windowLen(), w.endWindow)
	w.mu.Unlock()
	w.logBatch(batch)
}

// stop ends the open window, naming the sources it gathered.
func (w *captureWarnings) stop() {
	w.mu.Lock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	batch := w.pending
	w.pending = nil
	w.mu.Unlock()
	w.logBatch(batch)
}

// logBatch names several sources in one line, with how to turn capture on
// for each library.
func (w *captureWarnings) logBatch(batch []captureSource) {
	if len(batch) == 0 {
		return
	}
	libraries := make([]string, len(batch))
	for i, s := range batch {
		libraries[i] = s.library
	}
	slices.Sort(libraries)
	libraries = slices.Compact(libraries)
	how := zap.Object("how_to_turn_on", zapcore.ObjectMarshalerFunc(func(enc zapcore.ObjectEncoder) error {
		for _, l := range libraries {
			enc.AddString(l, genai.CaptureHint(l))
		}
		return nil
	}))
	w.logger.Warn("llm_eval: more services send generations without message content, so they are not_scorable: content capture is off; "+
		"how to turn it on for each library is in how_to_turn_on (logged once per service and library)",
		zap.Int("count", len(batch)), zap.Objects("sources", batch), how)
}

func (w *captureWarnings) windowLen() time.Duration {
	if w.window > 0 {
		return w.window
	}
	return captureWarnWindow
}
