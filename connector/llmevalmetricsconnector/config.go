package llmevalmetricsconnector // import "github.com/llm-eval/llm_eval/connector/llmevalmetricsconnector"

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/confmap"
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
	_ confmap.Validator = (*Config)(nil)
	_ confmap.Validator = (*ExemplarsConfig)(nil)
)

// defaultBuckets are 0, 0.1, ..., 1: scores are fractions of a scale of 1
// by default.
var defaultBuckets = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}

func createDefaultConfig() *Config {
	return &Config{
		Buckets:              slices.Clone(defaultBuckets),
		MetricsFlushInterval: 15 * time.Second,
		MaxSeries:            1000,
		Exemplars:            ExemplarsConfig{Enabled: true, MaxPerDataPoint: 5},
	}
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
	if cfg.MetricsFlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("metrics_flush_interval: must be positive, got %s", cfg.MetricsFlushInterval))
	}
	if cfg.MetricsExpiration < 0 {
		errs = append(errs, fmt.Errorf("metrics_expiration: must not be negative, got %s", cfg.MetricsExpiration))
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

// Validate checks the exemplar settings; the collector prefixes the error
// with the section's key path.
func (ec *ExemplarsConfig) Validate() error {
	if ec.Enabled && ec.MaxPerDataPoint <= 0 {
		return fmt.Errorf("max_per_data_point: must be positive when exemplars are enabled, got %d", ec.MaxPerDataPoint)
	}
	return nil
}
