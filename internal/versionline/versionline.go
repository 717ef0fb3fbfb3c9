// Package versionline checks that the distribution's ocb manifest, ocb
// itself and the root go.mod are on one OpenTelemetry Collector release line.
// Components built against one line may not compile, or may change the
// module graph, in a build of another.
package versionline // import "github.com/llm-eval/llm_eval/internal/versionline"

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Module path prefixes that belong to the Collector's release trains.
const (
	corePrefix    = "go.opentelemetry.io/collector"
	contribPrefix = "github.com/open-telemetry/opentelemetry-collector-contrib"
)

// semver matches vMAJOR.MINOR.PATCH with an optional suffix.
var semver = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)`)

// Line is a release line: the v0 minor of the unstable modules (165 for
// v0.165.x) and the v1 minor of the stable ones (71 for v1.71.x). A zero
// field means no module of that kind was seen.
type Line struct {
	Unstable, Stable int
}

func (l Line) String() string {
	return fmt.Sprintf("v0.%d / v1.%d", l.Unstable, l.Stable)
}

// Module is one Collector module and the version a file asks for.
type Module struct {
	Path, Version, Source string
}

// collectorModule reports whether path is released with the Collector.
func collectorModule(path string) bool {
	for _, p := range []string{corePrefix, contribPrefix} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// GoModModules returns the Collector modules that a go.mod requires,
// direct and indirect.
func GoModModules(gomod []byte) []Module {
	var mods []Module
	inRequire := false
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			inRequire = true
			continue
		case inRequire && line == ")":
			inRequire = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimSpace(strings.TrimPrefix(line, "require "))
		case !inRequire:
			continue
		}
		f := strings.Fields(line)
		if len(f) == 2 && collectorModule(f[0]) {
			mods = append(mods, Module{Path: f[0], Version: f[1], Source: "go.mod"})
		}
	}
	return mods
}

// manifest is the part of an ocb manifest that names modules.
type manifest struct {
	Receivers  []component `yaml:"receivers"`
	Processors []component `yaml:"processors"`
	Exporters  []component `yaml:"exporters"`
	Connectors []component `yaml:"connectors"`
	Extensions []component `yaml:"extensions"`
	Providers  []component `yaml:"providers"`
	Converters []component `yaml:"converters"`
}

type component struct {
	GoMod string `yaml:"gomod"`
}

// ManifestModules returns the Collector modules an ocb manifest builds in.
func ManifestModules(data []byte) ([]Module, error) {
	var m manifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading the ocb manifest: %w", err)
	}
	var mods []Module
	for _, list := range [][]component{m.Receivers, m.Processors, m.Exporters, m.Connectors, m.Extensions, m.Providers, m.Converters} {
		for _, c := range list {
			f := strings.Fields(c.GoMod)
			if len(f) != 2 || !collectorModule(f[0]) {
				continue
			}
			mods = append(mods, Module{Path: f[0], Version: f[1], Source: "builder-config.yaml"})
		}
	}
	return mods, nil
}

// Check returns an error naming every module that is not on the line of
// the others, and the line they share. ocbVersion, when not empty, is the
// version of ocb (an unstable module) and must be on the line too.
func Check(ocbVersion string, mods ...[]Module) (Line, error) {
	var all []Module
	for _, m := range mods {
		all = append(all, m...)
	}
	if ocbVersion != "" {
		all = append(all, Module{Path: corePrefix + "/cmd/builder", Version: ocbVersion, Source: "Makefile OCB_VERSION"})
	}
	if len(all) == 0 {
		return Line{}, errors.New("no Collector module found")
	}

	// The line is the most common minor of each kind; the rest are named.
	unstable, stable := map[int][]Module{}, map[int][]Module{}
	var errs []error
	for _, m := range all {
		sm := semver.FindStringSubmatch(m.Version)
		if sm == nil {
			errs = append(errs, fmt.Errorf("%s: %s %s is not a release version", m.Source, m.Path, m.Version))
			continue
		}
		var minor int
		_, _ = fmt.Sscan(sm[2], &minor)
		switch sm[1] {
		case "0":
			unstable[minor] = append(unstable[minor], m)
		case "1":
			stable[minor] = append(stable[minor], m)
		default:
			errs = append(errs, fmt.Errorf("%s: %s %s has an unexpected major version", m.Source, m.Path, m.Version))
		}
	}
	line := Line{Unstable: majority(unstable), Stable: majority(stable)}
	errs = append(errs, strays(unstable, line.Unstable, line)...)
	errs = append(errs, strays(stable, line.Stable, line)...)
	return line, errors.Join(errs...)
}

// majority returns the minor most modules share; ties go to the newest.
func majority(byMinor map[int][]Module) int {
	best, n := 0, -1
	for minor, mods := range byMinor {
		if len(mods) > n || (len(mods) == n && minor > best) {
			best, n = minor, len(mods)
		}
	}
	return best
}

func strays(byMinor map[int][]Module, want int, line Line) []error {
	var out []string
	for minor, mods := range byMinor {
		if minor == want {
			continue
		}
		for _, m := range mods {
			out = append(out, fmt.Sprintf("%s: %s %s is not on the line %s of the other Collector modules", m.Source, m.Path, m.Version, line))
		}
	}
	sort.Strings(out)
	errs := make([]error, len(out))
	for i, s := range out {
		errs[i] = errors.New(s)
	}
	return errs
}

// ocbVersionRE finds the ocb pin in the Makefile.
var ocbVersionRE = regexp.MustCompile(`(?m)^OCB_VERSION\s*:?=\s*(\S+)`)

// MakefileOCBVersion returns the OCB_VERSION the Makefile pins.
func MakefileOCBVersion(makefile []byte) (string, error) {
	m := ocbVersionRE.FindSubmatch(makefile)
	if m == nil {
		return "", errors.New("Makefile: no OCB_VERSION")
	}
	return string(m[1]), nil
}

// BinaryModules returns the Collector modules built into a Go binary, as
// its build information records them (a replaced module with the version
// it was replaced by).
func BinaryModules(path string) ([]Module, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the build information of %s: %w", path, err)
	}
	var mods []Module
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if collectorModule(d.Path) {
			mods = append(mods, Module{Path: d.Path, Version: m.Version, Source: path})
		}
	}
	return mods, nil
}

// Pinned returns an error naming every core Collector module (go.opentelemetry.io/collector/...)
// that built is at another version than pins asks for: a component may
// pull core forward within its line (v1.71.0 to v1.71.1), and llm_eval is
// tested against the versions of its go.mod.
func Pinned(pins, built []Module) error {
	want := map[string]string{}
	for _, m := range pins {
		want[m.Path] = m.Version
	}
	var errs []error
	for _, m := range built {
		if !strings.HasPrefix(m.Path, corePrefix+"/") {
			continue
		}
		if v, ok := want[m.Path]; ok && v != m.Version {
			errs = append(errs, fmt.Errorf("%s: %s %s, but %s asks for %s", m.Source, m.Path, m.Version, pinsSource(pins), v))
		}
	}
	return errors.Join(errs...)
}

func pinsSource(pins []Module) string {
	if len(pins) == 0 {
		return "the pins"
	}
	return pins[0].Source
}
