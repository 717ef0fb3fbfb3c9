package main

import (
	"context"
	"fmt"
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
}

// measureWindows alternates the sender between windows with and without
// selectable GenAI spans, starting without, until ctx ends, and measures
// each window's CPU and sampled generations. Both kinds of window send the
// same spans and bytes, so within one collector process their difference is
// the cost of evaluating, free of the run-to-run noise that comparing two
// processes carries.
func measureWindows(ctx context.Context, c *collector, snd *sender, length time.Duration) []window {
	var out []window
	for on := false; ; on = !on {
		snd.hideGenAI.Store(!on)
		select {
		case <-ctx.Done():
			return out
		case <-time.After(windowSettle):
		}
		cpu0, err := c.cpuSeconds()
		if err != nil {
			return out
		}
		sampled0, t0 := c.metric("otelcol_processor_llm_eval_spans_sampled"), time.Now()
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
		out = append(out, window{genAI: on, cpu: (cpu1 - cpu0) / d,
			sampled: (c.metric("otelcol_processor_llm_eval_spans_sampled") - sampled0) / d})
	}
}

// printWindows reports the CPU per evaluated generation of a -windows run:
// for each window with GenAI, its CPU rate minus the mean of its
// neighbours without, over its sampled generations per second.
func printWindows(name string, ws []window) {
	if len(ws) < 3 {
		return
	}
	var perGen, ratios []float64
	for i, w := range ws {
		if !w.genAI || w.sampled <= 0 {
			continue
		}
		var off []float64
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(ws) && !ws[j].genAI {
				off = append(off, ws[j].cpu)
			}
		}
		if len(off) == 0 {
			continue
		}
		base := (off[0] + off[len(off)-1]) / 2
		perGen = append(perGen, (w.cpu-base)/w.sampled*1000)
		ratios = append(ratios, w.cpu/base)
	}
	if len(perGen) == 0 {
		return
	}
	fmt.Printf("windows, %s: %d windows with GenAI against their neighbours without: CPU per evaluated generation median %.2f ms (each: %.2f); CPU with / without median %.3f x\n",
		name, len(perGen), median(perGen), perGen, median(ratios))
}
