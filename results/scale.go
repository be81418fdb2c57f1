package results

// ScaleRow is one point of bench perf's scale part: the harness's own
// footprint with Owners owners in one process, and whether the run was
// still judged as every run is.
type ScaleRow struct {
	Owners  int `json:"owners"`
	Clients int `json:"clients"`
	// Loop is "open" (at Rate) or "closed" (every owner in a call at once,
	// Rate 0).
	Loop  string  `json:"loop,omitempty"`
	Locks int     `json:"locks"`
	Rate  float64 `json:"rate"` // offered ops/s across all owners (open loop)
	// OpsPerSec is what the run made of Rate.
	OpsPerSec    float64 `json:"ops_per_s"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	// TargetRSSBytes bounds PeakRSSBytes at this many owners; 0 for none.
	TargetRSSBytes int64 `json:"target_rss_bytes,omitempty"`
	// Goroutines is the most seen; GoroutinesEarly and GoroutinesLate
	// the most in the first and the last tenth of the measured time,
	// Grew set when the late exceed the early as a leak would.
	Goroutines      int   `json:"goroutines"`
	GoroutinesEarly int   `json:"goroutines_early"`
	GoroutinesLate  int   `json:"goroutines_late"`
	Grew            bool  `json:"grew,omitempty"`
	HeapEarly       int64 `json:"heap_early_bytes"`
	HeapLate        int64 `json:"heap_late_bytes"`
	// Safety is the safety checker's verdict on the run; Fairness its
	// fairness figures.
	Safety   Safety   `json:"safety"`
	Fairness Fairness `json:"fairness"`
	// Costs are what the owners cost, component by component.
	Costs []ScaleCost `json:"costs,omitempty"`
	// Saved is the run's result file.
	Saved string `json:"saved,omitempty"`
}

// ScaleCost is one component of a scale point's footprint: Bytes at the
// point's owners, and how they were measured or computed.
type ScaleCost struct {
	Component string `json:"component"`
	Bytes     int64  `json:"bytes"`
	How       string `json:"how"`
}

// RSSPerOwner is peak RSS over the owners: an upper bound on an owner's
// cost, the process's fixed footprint included.
func (r ScaleRow) RSSPerOwner() float64 {
	if r.Owners <= 0 {
		return 0
	}
	return float64(r.PeakRSSBytes) / float64(r.Owners)
}

// Judged reports whether the run was judged as every run is: the safety
// checker saw every critical section and found no violation, and the
// fairness figures were computed.
func (r ScaleRow) Judged() bool { return r.Safety.OK() && r.Fairness.Measured() }

// Met reports whether peak RSS is within the target (true without one).
func (r ScaleRow) Met() bool { return r.TargetRSSBytes == 0 || r.PeakRSSBytes <= r.TargetRSSBytes }
