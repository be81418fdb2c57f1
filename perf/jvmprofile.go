package perf

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/lockbench/lockbench/impls"
	"github.com/lockbench/lockbench/redisson"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/workloads"
)

// profiledFrames is how many top frames (and packages) a JVM profile
// keeps.
const profiledFrames = 8

// profiledAtLeast is the shortest measured time of a recorded run: the
// recording samples a few threads every 10 ms, and a short run leaves too
// few samples for the top frames to stand apart.
const profiledAtLeast = 10 * time.Second

// The workload each Redisson row is profiled on, where it runs:
// uncontended at 32 owners, where the JVM's own work is the most of each
// cycle; otherwise the first workload the row runs.
const profiledProfile, profiledOwners = "uncontended", 32

// jvmCells are the group each of the site's Redisson rows is profiled
// on, by implementation, in the order the rows first appear.
func (s *siteRun) jvmCells(spec LineupSpec) (names []string, group map[string]int) {
	group = map[string]int{}
	for gi, g := range s.Groups {
		for _, name := range g.Impls {
			if impls.RedissonOf(spec.Impls[name]) == nil {
				continue
			}
			if _, ok := group[name]; !ok {
				names = append(names, name)
				group[name] = gi
			} else if g.Profile == profiledProfile && g.Owners == profiledOwners {
				group[name] = gi
			}
		}
	}
	return names, group
}

// profileJVMs runs each Redisson row once more on its profiled cell with a
// flight recording into spec.Recordings, and keeps its top frames. A
// recording that fails is kept with its error; only ctx's end stops it.
func (s *siteRun) profileJVMs(ctx context.Context, spec LineupSpec, n *progress) error {
	names, group := s.jvmCells(spec)
	for _, name := range names {
		g := s.Groups[group[name]]
		p, _ := groupProfile(g, spec)
		p.Duration = max(p.Duration, workloads.Duration(profiledAtLeast))
		n.done++
		n.say("after the rounds · %s at %s · %s with a flight recording (run %d of %d)", p.Name, results.Count(p.TotalOwners(), "owner"), name, n.done, n.of)
		prof := results.JVMProfile{Impl: name, Profile: p.Name, Owners: p.TotalOwners(), Clients: p.Clients, Duration: time.Duration(p.Duration),
			Recording: filepath.Join(spec.Recordings, fmt.Sprintf("jvm-%s-%s-%d-%s.jfr", name, p.Name, p.TotalOwners(), results.Stamp(time.Now())))}
		r := impls.RedissonOf(spec.Impls[name])
		r.JFR = prof.Recording
		cfg := s.Base
		cfg.Profile, cfg.Impl, cfg.Progress = p, spec.Impls[name], nil
		cfg.Meta.Start = time.Now()
		res, err := workloads.Run(ctx, cfg)
		r.JFR = ""
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if res != nil {
			prof.OpsPerSec = res.Throughput.OpsPerSec
		}
		if err == nil {
			err = readProfile(ctx, &prof)
		}
		if err != nil {
			prof.Error = err.Error()
		}
		s.m.JVMProfiles = append(s.m.JVMProfiles, prof)
	}
	return nil
}

// readProfile fills p's frames and packages from its recording.
func readProfile(ctx context.Context, p *results.JVMProfile) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	fs, total, err := redisson.TopFrames(ctx, p.Recording, 0)
	if err != nil {
		return err
	}
	p.Samples = total
	p.Top = frames(fs[:min(profiledFrames, len(fs))])
	pkgs := redisson.ByPackage(fs)
	p.Packages = frames(pkgs[:min(profiledFrames, len(pkgs))])
	return nil
}

func frames(fs []redisson.Frame) []results.Frame {
	var out []results.Frame
	for _, f := range fs {
		out = append(out, results.Frame{Method: f.Method, Samples: f.Samples})
	}
	return out
}
