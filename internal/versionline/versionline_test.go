package versionline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goModOnLine = `module example.com/x

go 1.26.0

require (
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden v0.165.0
	go.opentelemetry.io/collector/component v1.71.0
	go.opentelemetry.io/collector/connector v0.165.0 // a comment
	go.opentelemetry.io/otel v1.47.0
)

require go.opentelemetry.io/collector/pdata v1.71.0 // indirect
`

func manifestWith(exporterVersion string) []byte {
	return []byte(`dist:
  name: x
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v0.165.0
exporters:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter ` + exporterVersion + `
connectors:
  - gomod: example.com/x v0.0.0
    path: ./
`)
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		gomod    string
		manifest []byte
		ocb      string
		wantErr  []string // every substring must be in the error; nil means no error
	}{
		{name: "one line", gomod: goModOnLine, manifest: manifestWith("v0.165.0"), ocb: "v0.165.0"},
		{name: "a patch release is on its line", gomod: goModOnLine, manifest: manifestWith("v0.165.1"), ocb: "v0.165.0"},
		{
			name: "manifest component on an older line", gomod: goModOnLine, manifest: manifestWith("v0.161.0"), ocb: "v0.165.0",
			wantErr: []string{"builder-config.yaml: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v0.161.0 is not on the line v0.165 / v1.71"},
		},
		{
			name: "ocb on another line", gomod: goModOnLine, manifest: manifestWith("v0.165.0"), ocb: "v0.162.0",
			wantErr: []string{"Makefile OCB_VERSION: go.opentelemetry.io/collector/cmd/builder v0.162.0"},
		},
		{
			name: "go.mod mixes stable lines", manifest: manifestWith("v0.165.0"), ocb: "v0.165.0",
			gomod:   goModOnLine + "require go.opentelemetry.io/collector/consumer v1.68.0\n",
			wantErr: []string{"go.mod: go.opentelemetry.io/collector/consumer v1.68.0"},
		},
		{
			name: "whole manifest behind go.mod", gomod: goModOnLine, ocb: "v0.165.0",
			manifest: []byte("receivers:\n  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v0.162.0\nexporters:\n  - gomod: go.opentelemetry.io/collector/exporter/debugexporter v0.162.0\n"),
			wantErr:  []string{"otlpreceiver v0.162.0", "debugexporter v0.162.0"},
		},
		{
			name: "not a release version", gomod: goModOnLine, manifest: manifestWith("latest"), ocb: "v0.165.0",
			wantErr: []string{"fileexporter latest is not a release version"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			manifestMods, err := ManifestModules(tt.manifest)
			require.NoError(t, err)
			line, err := Check(tt.ocb, GoModModules([]byte(tt.gomod)), manifestMods)
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, Line{Unstable: 165, Stable: 71}, line)
				return
			}
			require.Error(t, err)
			for _, want := range tt.wantErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestGoModModulesReadsBothRequireForms(t *testing.T) {
	mods := GoModModules([]byte(goModOnLine))
	var paths []string
	for _, m := range mods {
		paths = append(paths, m.Path+" "+m.Version)
	}
	assert.Equal(t, []string{
		"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden v0.165.0",
		"go.opentelemetry.io/collector/component v1.71.0",
		"go.opentelemetry.io/collector/connector v0.165.0",
		"go.opentelemetry.io/collector/pdata v1.71.0",
	}, paths, "otel (not a Collector module) is left out")
}

func TestManifestModulesRejectsBrokenYAML(t *testing.T) {
	_, err := ManifestModules([]byte("receivers: [gomod: {"))
	assert.ErrorContains(t, err, "reading the ocb manifest")
}

func TestMakefileOCBVersion(t *testing.T) {
	v, err := MakefileOCBVersion([]byte("GO ?= go\nOCB_VERSION := v0.165.0\n"))
	require.NoError(t, err)
	assert.Equal(t, "v0.165.0", v)
	_, err = MakefileOCBVersion([]byte("GO ?= go\n"))
	assert.ErrorContains(t, err, "no OCB_VERSION")
}

// TestRepositoryIsOnOneLine is the check `make version-check` (part of
// `make test`) runs on this repository's own files.
func TestRepositoryIsOnOneLine(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		return data
	}
	manifestMods, err := ManifestModules(read("builder-config.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, manifestMods)
	ocb, err := MakefileOCBVersion(read("Makefile"))
	require.NoError(t, err)
	line, err := Check(ocb, GoModModules(read("go.mod")), manifestMods)
	require.NoError(t, err, "go.mod, builder-config.yaml and OCB_VERSION must be on one Collector line")
	t.Logf("Collector line %s", line)
}

func TestPinned(t *testing.T) {
	pins := GoModModules([]byte(goModOnLine))
	built := []Module{
		{Path: "go.opentelemetry.io/collector/component", Version: "v1.71.0", Source: "bin"},
		{Path: "go.opentelemetry.io/collector/pdata", Version: "v1.71.1", Source: "bin"},
		{Path: "go.opentelemetry.io/collector/otelcol", Version: "v0.165.1", Source: "bin"}, // not in go.mod
		{Path: "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden", Version: "v0.165.1", Source: "bin"},
	}
	err := Pinned(pins, built)
	require.Error(t, err)
	assert.Equal(t, "bin: go.opentelemetry.io/collector/pdata v1.71.1, but go.mod asks for v1.71.0", err.Error(),
		"only core modules go.mod pins are compared; contrib patch releases may differ")
	assert.NoError(t, Pinned(pins, built[:1]))
}

func TestBinaryModulesOfThisTestBinary(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	mods, err := BinaryModules(exe)
	require.NoError(t, err)
	_, err = BinaryModules(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorContains(t, err, "reading the build information")
	for _, m := range mods {
		assert.True(t, collectorModule(m.Path), "%s is not a Collector module", m.Path)
	}
}

// TestBuiltCollectorIsOnTheLine checks what `make build` built: every
// Collector module in bin/otelcol-llmeval is on the line, and core is at
// the versions of go.mod, whatever the manifest's components pull in.
// `make version-check` runs it with LLMEVAL_COLLECTOR set.
func TestBuiltCollectorIsOnTheLine(t *testing.T) {
	bin := os.Getenv("LLMEVAL_COLLECTOR")
	if bin == "" {
		t.Skip("LLMEVAL_COLLECTOR is not set; `make version-check` builds the collector and sets it")
	}
	built, err := BinaryModules(bin)
	require.NoError(t, err)
	require.NotEmpty(t, built)
	gomod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	pins := GoModModules(gomod)
	line, err := Check("", pins, built)
	require.NoError(t, err, "the built collector mixes Collector lines")
	require.NoError(t, Pinned(pins, built), "a component moved core away from go.mod's versions")
	t.Logf("%d Collector modules built in, line %s", len(built), line)
}
