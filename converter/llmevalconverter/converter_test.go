package llmevalconverter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

func TestConvertChecksStorage(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // nothing: no error
	}{
		{"defined and enabled", `
processors:
  llm_eval:
    storage: file_storage/llm_eval
extensions:
  file_storage/llm_eval: {directory: /tmp}
service:
  extensions: [file_storage/llm_eval]
  pipelines:
    traces: {processors: [llm_eval]}
`, nil},
		{"no storage", `
processors:
  llm_eval: {}
service:
  pipelines:
    traces: {processors: [llm_eval]}
`, nil},
		{"not configured", `
processors:
  llm_eval/prod:
    storage: file_storage/llm_eval
extensions:
  file_storage/other: {}
service:
  extensions: [file_storage/other]
  pipelines:
    traces: {processors: [llm_eval/prod]}
    logs: {processors: [llm_eval/prod]}
`, []string{`processors::llm_eval/prod::storage: extension "file_storage/llm_eval" is not configured: configure it under extensions and list it in service::extensions`}},
		{"not enabled", `
processors:
  llm_eval:
    storage: file_storage
extensions:
  file_storage: {}
service:
  pipelines:
    traces: {processors: [llm_eval]}
`, []string{`processors::llm_eval::storage: extension "file_storage" is configured but not listed in service::extensions`}},
		{"both processors named", `
processors:
  llm_eval/a: {storage: file_storage/a}
  llm_eval/b: {storage: file_storage/b}
service:
  pipelines:
    traces: {processors: [llm_eval/a, llm_eval/b]}
`, []string{`processors::llm_eval/a::storage: extension "file_storage/a"`, `processors::llm_eval/b::storage: extension "file_storage/b"`}},
		{"unused processor: the collector builds it not", `
processors:
  llm_eval: {storage: file_storage}
service:
  pipelines:
    traces: {processors: []}
`, nil},
		{"other processor types", `
processors:
  batch: {storage: file_storage}
service:
  pipelines:
    traces: {processors: [batch]}
`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retrieved, err := confmap.NewRetrievedFromYAML([]byte(tt.yaml))
			require.NoError(t, err)
			conf, err := retrieved.AsConf()
			require.NoError(t, err)
			before := conf.ToStringMap()
			c := NewFactory().Create(confmap.ConverterSettings{})
			err = c.Convert(context.Background(), conf)
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				for _, w := range tt.want {
					assert.Contains(t, err.Error(), w)
				}
			}
			assert.Equal(t, before, conf.ToStringMap(), "the configuration is not changed")
		})
	}
}
