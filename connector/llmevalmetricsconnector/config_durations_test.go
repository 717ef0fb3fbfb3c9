package llmevalmetricsconnector

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// TestDurationsWithoutUnitFailNamingTheKey: each duration key refuses a
// number without a unit (decoded as nanoseconds: a 15 ns flush ticker)
// naming the key and the unit it most likely lacked; 0 stays valid where
// it has a meaning.
func TestDurationsWithoutUnitFailNamingTheKey(t *testing.T) {
	tests := []struct {
		key   string
		value any
		want  string // "" when the value is valid
	}{
		{key: "metrics_flush_interval", value: 15, want: `metrics_flush_interval: must be at least 1ms, got 15ns; a number without a unit is read as nanoseconds (write e.g. "15s")`},
		{key: "metrics_flush_interval", value: 0, want: "metrics_flush_interval: must be at least 1ms, got 0s"},
		{key: "metrics_flush_interval", value: "15s"},
		{key: "new_series_hold", value: 15, want: `new_series_hold: must be at least 1ms, got 15ns; a number without a unit is read as nanoseconds (write e.g. "15s") (or 0 for one flush at zero)`},
		{key: "new_series_hold", value: 0},
		{key: "new_series_hold", value: "-1s", want: "new_series_hold: must be at least 1ms, got -1s (or 0 for one flush at zero)"},
		{key: "metrics_expiration", value: 600, want: `metrics_expiration: must be at least 1ms, got 600ns; a number without a unit is read as nanoseconds (write e.g. "600s") (or 0 for never)`},
		{key: "metrics_expiration", value: 0},
		{key: "metrics_expiration", value: "10m"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%v", tt.key, tt.value), func(t *testing.T) {
			cfg := createDefaultConfig()
			require.NoError(t, cfg.Unmarshal(confmap.NewFromStringMap(map[string]any{tt.key: tt.value})))
			err := confmap.Validate(cfg)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "2 x (new_series_hold", "a missing unit is reported alone")
		})
	}
}
