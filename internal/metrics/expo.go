package metrics

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The Prometheus text exposition format (version 0.0.4), written by the
// few types Weir's series need: counters and histograms with up to three
// labels, and families read at each scrape. (prometheus/client_golang
// links protobuf into every weir process, several milliseconds of each
// start: docs/adr/0038-no-protobuf-runtime.md.)

// Metric types, as the # TYPE line names them.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
	typeSummary   = "summary"
)

// family is one metric family as a scrape found it.
type family struct {
	name, help, typ string
	samples         []sample
}

// sample is one line of a family: the family's name with suffix (_bucket,
// _sum, _count or none), its labels in order, its value.
type sample struct {
	suffix string
	labels []label
	value  float64
}

type label struct{ name, value string }

// collector returns its families at each scrape; a family it could not
// read (a query failed) is left out.
type collector interface{ collect() []family }

type collectorFunc func() []family

func (f collectorFunc) collect() []family { return f() }

// registry is a process's collectors.
type registry struct {
	mu         sync.Mutex
	collectors []collector
}

func (r *registry) add(cs ...collector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collectors = append(r.collectors, cs...)
}

// write writes every family that has samples, sorted by name, to b.
func (r *registry) write(b *bytes.Buffer) {
	r.mu.Lock()
	cs := slices.Clone(r.collectors)
	r.mu.Unlock()
	var fams []family
	for _, c := range cs {
		fams = append(fams, c.collect()...)
	}
	sort.SliceStable(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	for i, f := range fams {
		if i > 0 && fams[i-1].name == f.name {
			continue // written with the first of its name
		}
		for _, more := range fams[i+1:] {
			if more.name != f.name {
				break
			}
			f.samples = append(slices.Clip(f.samples), more.samples...) // two pools, say
		}
		if len(f.samples) == 0 {
			continue
		}
		b.WriteString("# HELP " + f.name + " " + escapeHelp.Replace(f.help) + "\n# TYPE " + f.name + " " + f.typ + "\n")
		for _, s := range f.samples {
			b.WriteString(f.name + s.suffix)
			for i, l := range s.labels {
				sep := ","
				if i == 0 {
					sep = "{"
				}
				b.WriteString(sep + l.name + `="` + escapeLabel.Replace(l.value) + `"`)
			}
			if len(s.labels) > 0 {
				b.WriteString("}")
			}
			b.WriteString(" " + formatValue(s.value) + "\n")
		}
	}
}

var (
	escapeHelp  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	escapeLabel = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// sortSamples orders samples by their label values, as a vector's are.
func sortSamples(samples []sample) {
	sort.SliceStable(samples, func(i, j int) bool { return labelsBefore(samples[i].labels, samples[j].labels) })
}

// labelsBefore orders label sets by their values, label by label.
func labelsBefore(a, b []label) bool {
	for k := range min(len(a), len(b)) {
		if a[k].value != b[k].value {
			return a[k].value < b[k].value
		}
	}
	return len(a) < len(b)
}

// gauge is a family of one gauge, with labels when given.
func gauge(name, help string, v float64, labels ...label) family {
	return family{name: name, help: help, typ: typeGauge, samples: []sample{{labels: labels, value: v}}}
}

// counter is a family of one counter read at each scrape, with labels when
// given.
func counter(name, help string, v float64, labels ...label) family {
	return family{name: name, help: help, typ: typeCounter, samples: []sample{{labels: labels, value: v}}}
}

// labelValues are a series' label values, in the order of its vector's
// names; every Weir series has at most three labels.
type labelValues [3]string

// vec is what counter and histogram vectors share: their family's name,
// help and label names, and their series by label values.
type vec[S any] struct {
	name, help string
	names      []string
	order      []int // label indexes sorted by name, as Prometheus writes them
	newSeries  func() *S

	mu     sync.RWMutex
	series map[labelValues]*S
}

func newVec[S any](name, help string, names []string, newSeries func() *S) *vec[S] {
	if len(names) > len(labelValues{}) {
		panic("metrics: " + name + " has more labels than a series holds")
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return names[order[i]] < names[order[j]] })
	v := &vec[S]{name: name, help: help, names: names, order: order, newSeries: newSeries, series: map[labelValues]*S{}}
	if len(names) == 0 {
		v.with() // exported from the start, at zero
	}
	return v
}

// with returns the series of values (one per label name), made on first use.
func (v *vec[S]) with(values ...string) *S {
	if len(values) != len(v.names) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", v.name, len(v.names), len(values)))
	}
	var key labelValues
	copy(key[:], values)
	v.mu.RLock()
	s := v.series[key]
	v.mu.RUnlock()
	if s != nil {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.series[key]; s == nil {
		s = v.newSeries()
		v.series[key] = s
	}
	return s
}

// each calls f with every series' labels (sorted by name) in the order of
// their values.
func (v *vec[S]) each(f func([]label, *S)) {
	type entry struct {
		labels []label
		series *S
	}
	v.mu.RLock()
	entries := make([]entry, 0, len(v.series))
	for k, s := range v.series {
		labels := make([]label, len(v.order))
		for i, o := range v.order {
			labels[i] = label{v.names[o], k[o]}
		}
		entries = append(entries, entry{labels, s})
	}
	v.mu.RUnlock()
	sort.Slice(entries, func(i, j int) bool { return labelsBefore(entries[i].labels, entries[j].labels) })
	for _, e := range entries {
		f(e.labels, e.series)
	}
}

// counterVec counts events by labels.
type counterVec struct{ *vec[atomic.Uint64] }

func newCounterVec(name, help string, labels ...string) counterVec {
	return counterVec{newVec(name, help, labels, func() *atomic.Uint64 { return new(atomic.Uint64) })}
}

// add counts n events of the series of values.
func (c counterVec) add(n uint64, values ...string) { c.with(values...).Add(n) }

func (c counterVec) collect() []family {
	f := family{name: c.name, help: c.help, typ: typeCounter}
	c.each(func(labels []label, n *atomic.Uint64) {
		f.samples = append(f.samples, sample{labels: labels, value: float64(n.Load())})
	})
	return []family{f}
}

// histogram counts observations into buckets by upper bound (le).
type histogram struct {
	counts []atomic.Uint64 // per bucket, the last for +Inf; not cumulative
	sum    atomic.Uint64   // float64 bits
}

func (h *histogram) observe(bounds []float64, v float64) {
	h.counts[sort.SearchFloat64s(bounds, v)].Add(1) // the first bound ≥ v
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// histogramVec is histograms by labels, sharing bucket bounds.
type histogramVec struct {
	*vec[histogram]
	bounds []float64
}

func newHistogramVec(name, help string, bounds []float64, labels ...string) histogramVec {
	return histogramVec{newVec(name, help, labels, func() *histogram {
		return &histogram{counts: make([]atomic.Uint64, len(bounds)+1)}
	}), bounds}
}

// observe records v in the series of values.
func (h histogramVec) observe(v float64, values ...string) { h.with(values...).observe(h.bounds, v) }

// collect writes each series' cumulative buckets, sum and count (the +Inf
// bucket's: they agree even while observations land).
func (h histogramVec) collect() []family {
	f := family{name: h.name, help: h.help, typ: typeHistogram}
	h.each(func(labels []label, s *histogram) {
		var cum uint64
		for i := range s.counts {
			cum += s.counts[i].Load()
			le := "+Inf"
			if i < len(h.bounds) {
				le = formatValue(h.bounds[i])
			}
			f.samples = append(f.samples, sample{suffix: "_bucket", labels: append(slices.Clip(labels), label{"le", le}), value: float64(cum)})
		}
		f.samples = append(f.samples, sample{suffix: "_sum", labels: labels, value: math.Float64frombits(s.sum.Load())},
			sample{suffix: "_count", labels: labels, value: float64(cum)})
	})
	return []family{f}
}
