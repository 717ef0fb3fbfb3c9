package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/confmap"

	"github.com/llm-eval/llm_eval/internal/duration"
)

// Config configures the llm_eval_metrics connector.
type Config struct {
	// Buckets are the explicit upper bounds of the gen_ai.evaluation.score
	// histogram, strictly increasing. Scores above the last bound land in
	// the overflow bucket.
	Buckets []float64 `mapstructure:"buckets"`
	// MetricsFlushInterval is how often the cumulative state of every
	// series is sent downstream. Shutdown flushes once more.
	MetricsFlushInterval time.Duration `mapstructure:"metrics_flush_interval"`
	// MetricsExpiration drops a series that no result has updated for this
	// long; it is no longer sent, and a later result starts it afresh. 0,
	// the default, keeps series for the lifetime of the Collector, as the
	// spanmetrics connector does.
	MetricsExpiration time.Duration `mapstructure:"metrics_expiration"`
	// NewSeriesHold is how long a new series is exported at zero before
	// its counts: at least once, and until this long after that first
	// zero. Prometheus' increase() and rate() ignore a series' first
	// sample, so the zero must be scraped; it is therefore at least the
	// scrape interval. The results counted meanwhile are exported in full
	// afterwards: delayed, not lost.
	NewSeriesHold time.Duration `mapstructure:"new_series_hold"`
	// MaxSeries bounds the number of series per metric that have counted a
	// result (the zero outcome series of their sets come on top). Results
	// of new series beyond it are counted in one overflow series carrying
	// otel.metric.overflow=true.
	MaxSeries int `mapstructure:"max_series"`
	// ResourceAttributes, when set, lists the resource attributes copied
	// from the evaluated span's resource; empty keeps them all.
	ResourceAttributes []string `mapstructure:"resource_attributes"`
	// Exemplars configures trace and span id exemplars on data points.
	Exemplars ExemplarsConfig `mapstructure:"exemplars"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ExemplarsConfig configures exemplars.
type ExemplarsConfig struct {
	// Enabled attaches exemplars (trace id, span id, score) to data points.
	Enabled bool `mapstructure:"enabled"`
	// MaxPerDataPoint keeps the most recent exemplars seen since the last
	// flush, per data point.
	MaxPerDataPoint int `mapstructure:"max_per_data_point"`
}

var (
	_ confmap.Unmarshaler = (*Config)(nil)
	_ confmap.Validator   = (*Config)(nil)
	_ confmap.Validator   = (*ExemplarsConfig)(nil)
)

// defaultBuckets are 0, 0.1, ..., 1: scores are fractions of a scale of 1
// by default.
var defaultBuckets = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

// Bounds of the durations. The minimum catches a number written without a
// unit, which decodes as nanoseconds; the likely maxima are the longest
// each is plausibly meant to be, for the unit the error suggests (see
// duration.AtLeast).
const (
	minDuration         = time.Millisecond
	likelyMaxFlush      = 10 * time.Minute
	likelyMaxHold       = time.Hour
	likelyMaxExpiration = 7 * 24 * time.Hour
)

// defaultNewSeriesHold covers Prometheus' default scrape interval, 1m,
// with half of it to spare for scrapes that start late.
const defaultNewSeriesHold = 90 * time.Second

func createDefaultConfig() *Config {
	return &Config{
		Buckets:              slices.Clone(defaultBuckets),
		MetricsFlushInterval: 15 * time.Second,
		NewSeriesHold:        defaultNewSeriesHold,
		MaxSeries:            1000,
		Exemplars:            ExemplarsConfig{Enabled: true, MaxPerDataPoint: 5},
	}
}

// Unmarshal rejects keys the connector does not know before decoding,
// naming each by its path with the closest known key: the Collector's own
// error names only the map that holds a stray key and suggests nothing.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	if err := unknownKeys(conf); err != nil {
		return err
	}
	return conf.Unmarshal(cfg)
}

// Validate checks the top-level keys; the collector calls it, and each
// section's Validate, at startup (confmap.Validate).
func (cfg *Config) Validate() error {
	var errs []error
	if len(cfg.Buckets) == 0 {
		errs = append(errs, errors.New("buckets: at least one bucket bound is required"))
	}
	for i := 1; i < len(cfg.Buckets); i++ {
		if cfg.Buckets[i] <= cfg.Buckets[i-1] {
			errs = append(errs, fmt.Errorf("buckets: bounds must be strictly increasing, got %v after %v", cfg.Buckets[i], cfg.Buckets[i-1]))
			break
		}
	}
	if err := duration.AtLeast(cfg.MetricsFlushInterval, minDuration, likelyMaxFlush); err != nil {
		errs = append(errs, fmt.Errorf("metrics_flush_interval: %w", err))
	}
	if err := duration.ZeroOrAtLeast(cfg.NewSeriesHold, minDuration, likelyMaxHold, "0 for one flush at zero"); err != nil {
		errs = append(errs, fmt.Errorf("new_series_hold: %w", err))
	}
	if err := duration.ZeroOrAtLeast(cfg.MetricsExpiration, minDuration, likelyMaxExpiration, "0 for never"); err != nil {
		errs = append(errs, fmt.Errorf("metrics_expiration: %w", err))
	} else if least := cfg.minExpiration(); cfg.MetricsExpiration > 0 && cfg.MetricsExpiration < least {
		errs = append(errs, fmt.Errorf("metrics_expiration: must be 0 (never) or at least 2 x (new_series_hold + metrics_flush_interval) = %s, "+
			"so that a series' last counts are exported and scraped before it is dropped, got %s", least, cfg.MetricsExpiration))
	}
	if cfg.MaxSeries <= 0 {
		errs = append(errs, fmt.Errorf("max_series: must be positive, got %d", cfg.MaxSeries))
	}
	for i, k := range cfg.ResourceAttributes {
		if k == "" {
			errs = append(errs, fmt.Errorf("resource_attributes::%d: empty attribute name", i))
		}
	}
	return errors.Join(errs...)
}

// minExpiration is the shortest metrics_expiration that drops no series
// before its last counts have been exported for new_series_hold: counts
// held back are exported up to new_series_hold + 2 flushes after their
// last result, and must then be seen by a scrape.
func (cfg *Config) minExpiration() time.Duration {
	return 2 * (max(cfg.NewSeriesHold, 0) + max(cfg.MetricsFlushInterval, 0))
}

// Validate checks the exemplar settings; the collector prefixes the error
// with the section's key path.
func (ec *ExemplarsConfig) Validate() error {
	if ec.Enabled && ec.MaxPerDataPoint <= 0 {
		return fmt.Errorf("max_per_data_point: must be positive when exemplars are enabled, got %d", ec.MaxPerDataPoint)
	}
	return nil
}
