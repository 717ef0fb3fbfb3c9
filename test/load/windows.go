package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// windowSettle is skipped at the start of each window: the evaluations of
// the generations sent just before a switch (three judge calls of 400 ms in
// a row, plus queueing) still run in it.
const windowSettle = 4 * time.Second

// window is one stretch of a -windows run, measured after windowSettle.
type window struct {
	genAI   bool    // GenAI spans were selectable in this window
	cpu     float64 // collector CPU seconds per second
	sampled float64 // generations sampled for evaluation per second
	alloc   float64 // bytes the collector allocated per second
}

// Counters read at each window's ends: generations sampled for evaluation
// and heap bytes allocated.
const (
	metricSampled    = "otelcol_processor_llm_eval_spans_sampled"
	metricAllocBytes = "otelcol_process_runtime_total_alloc_bytes"
)

// measureWindows alternates the sender between windows with and without
// selectable GenAI spans, starting without, until ctx ends, and measures
// each window's CPU and sampled generations. Both kinds of window send the
// same spans and bytes, so within one collector process their difference is
// the cost of evaluating, free of the run-to-run noise that comparing two
// processes carries.
//
// With profiles set, each window's measured stretch is also recorded as a
// CPU profile in profiles.dir, so that the windows with GenAI can be merged
// and compared with those without (go tool pprof -diff_base).
func measureWindows(ctx context.Context, c *collector, snd *sender, length time.Duration, profiles windowProfiles) []window {
	var out []window
	for on := false; ; on = !on {
		snd.hideGenAI.Store(!on)
		select {
		case <-ctx.Done():
			return out
		case <-time.After(windowSettle):
		}
		// The counters are scraped outside the CPU measured: a scrape
		// costs the collector CPU too.
		sampled0, alloc0 := c.metric(metricSampled), c.metric(metricAllocBytes)
		cpu0, err := c.cpuSeconds()
		if err != nil {
			return out
		}
		t0 := time.Now()
		profiled := profiles.start(ctx, len(out), on, length-windowSettle)
		select {
		case <-ctx.Done():
			return out // a window cut short is not measured
		case <-time.After(length - windowSettle):
		}
		cpu1, err := c.cpuSeconds()
		if err != nil {
			return out
		}
		d := time.Since(t0).Seconds()
		if err := <-profiled; err != nil {
			fmt.Fprintf(os.Stderr, "load: window profile: %v\n", err)
		}
		out = append(out, window{genAI: on, cpu: (cpu1 - cpu0) / d,
			sampled: (c.metric(metricSampled) - sampled0) / d,
			alloc:   (c.metric(metricAllocBytes) - alloc0) / d})
	}
}

// windowProfiles records a CPU profile of each window through the
// collector's pprof extension at addr into dir; with dir empty it does
// nothing.
type windowProfiles struct{ addr, dir string }

// start fetches a profile of the coming stretch of window i, one second
// shorter than it so that it ends inside the window, and reports on the
// returned channel once it is written.
func (p windowProfiles) start(ctx context.Context, i int, genAI bool, stretch time.Duration) <-chan error {
	done := make(chan error, 1)
	if p.dir == "" {
		done <- nil
		return done
	}
	kind := "plain"
	if genAI {
		kind = "genai"
	}
	path := filepath.Join(p.dir, fmt.Sprintf("window-%02d-%s.pprof", i, kind))
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.addr, int((stretch - time.Second).Seconds()))
	go func() { done <- fetchProfile(ctx, url, path) }()
	return done
}

func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// printWindows reports the CPU per evaluated generation of a -windows run:
// for each window with GenAI, its CPU rate minus the mean of its
// neighbours without, over its sampled generations per second.
func printWindows(name string, ws []window) {
	if len(ws) < 3 {
		return
	}
	var perGen, ratios, allocPerGen []float64
	for i, w := range ws {
		if !w.genAI || w.sampled <= 0 {
			continue
		}
		var off []window
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(ws) && !ws[j].genAI {
				off = append(off, ws[j])
			}
		}
		if len(off) == 0 {
			continue
		}
		first, last := off[0], off[len(off)-1]
		base := (first.cpu + last.cpu) / 2
		perGen = append(perGen, (w.cpu-base)/w.sampled*1000)
		allocPerGen = append(allocPerGen, (w.alloc-(first.alloc+last.alloc)/2)/w.sampled/1024)
		ratios = append(ratios, w.cpu/base)
	}
	if len(perGen) == 0 {
		return
	}
	fmt.Printf("windows, %s: %d windows with GenAI against their neighbours without: CPU per evaluated generation median %.2f ms (each: %.2f); CPU with / without median %.3f x; heap allocated per evaluated generation median %.0f KiB\n",
		name, len(perGen), median(perGen), perGen, median(ratios), median(allocPerGen))
}
