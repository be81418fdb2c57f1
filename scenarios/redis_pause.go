package scenarios

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/faults"
)

var redisPauseScenario = &Scenario{
	Name:    "redis-pause",
	Summary: "Redis paused past the lease, then resumed: what happens to the holder and the TTL",
	Description: "A holder keeps a watchdog lock while a contender waits. Redis is frozen (SIGSTOP) for 1.5× " +
		"the watchdog timeout. The server's clock runs on while it is stopped, so on resume (SIGCONT) " +
		"the key is already past its expiry. The report shows the TTL before the pause, when the holder " +
		"learned of the loss, what the first reply after the resume said, and when the contender got the lock.",
	Invariant: "holder told of the loss before the resume; holder's hold gone after the resume; contender acquires; zero violations",
	Process:   true,
	Variants:  []Variant{{Name: "run", Plan: pausePlan, run: redisPause}},
}

func pauseFor(t Timing) time.Duration { return t.Watchdog * 3 / 2 }

func pausePlan(t Timing, _ *rand.Rand) []Planned {
	return []Planned{{At: faultStart, For: pauseFor(t), Kind: "pause", Target: "redis:primary", Detail: "SIGSTOP, SIGCONT on revert",
		build: func(r *rig) faults.Fault { return faults.Pause(r.env.Primary()) }}}
}

func redisPause(r *rig) error {
	if err := r.start(2, nil); err != nil {
		return err
	}
	if err := r.newClients(); err != nil {
		return err
	}
	w := r.t.Watchdog
	resume := faultStart + pauseFor(r.t)
	name := r.prefix + "lock-0"
	holderField := r.clients[0].lc.ID() + ":"
	type reading struct {
		before     time.Duration // TTL just before the pause
		afterAt    time.Time     // first reply after the resume
		afterTTL   time.Duration
		holderKept bool
		base       time.Time
	}
	readings := make(chan reading, 1)
	base := time.Now()
	go func() {
		var rd reading
		rd.base = base
		defer func() { readings <- rd }()
		mon := redis.NewClient(&redis.Options{Addr: r.env.Addr(), Protocol: 2, MaxRetries: -1,
			ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond})
		defer mon.Close()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for now := range t.C {
			if r.ctx.Err() != nil || now.Sub(base) > resume+w {
				return
			}
			since := now.Sub(base)
			d, err := mon.PTTL(r.ctx, name).Result()
			switch {
			case since < faultStart-50*time.Millisecond:
				if err == nil {
					rd.before = d
				}
			case since > resume && err == nil && rd.afterAt.IsZero():
				rd.afterAt, rd.afterTTL = time.Now(), d
				fields, _ := mon.HKeys(r.ctx, name).Result()
				rd.holderKept = slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, holderField) })
				return
			}
		}
	}()
	out, err := r.runDuel(duel{pairs: 1, holdUntil: resume + w/2, honour: true, until: resume + w/2, contHold: w / 4})
	rd := <-readings
	if err != nil {
		return err
	}
	res := out.res
	r.safetyFigures(res)
	r.figure("TTL before the pause", ms(rd.before), "ms")
	r.figure("first reply after the resume", secs(out.base, rd.afterAt), "s")
	r.figure("TTL in that reply", ms(rd.afterTTL), "ms")
	r.figure("holder told of the loss", secs(out.base, out.holderLostAt[0]), "s")
	r.figure("contender first acquired", secs(out.base, out.firstContend[0]), "s")
	// SIGCONT is sent at RevertStart; the contender's reply can arrive
	// before the revert returns, so End would be too late a mark.
	resumeAt := out.base.Add(resume)
	for _, e := range res.Events {
		if e.Kind == "pause" && e.RevertStart > 0 {
			resumeAt = out.base.Add(time.Duration(e.RevertStart * float64(time.Second)))
		}
	}
	lost := out.holderLostAt[0]
	r.check("holder told of the loss before the resume", "before "+resume.String(), since(out.base, lost), !lost.IsZero() && lost.Before(resumeAt))
	r.check("holder's hold gone after the resume", "no field of the holder", fmt.Sprintf("holder field present: %v (TTL %v)", rd.holderKept, rd.afterTTL),
		!rd.afterAt.IsZero() && !rd.holderKept)
	first := out.firstContend[0]
	r.check("contender acquires after the resume", "after "+resume.String(), since(out.base, first), !first.IsZero() && !first.Before(resumeAt))
	r.check("mutual exclusion", "0 violations", violations(res), res.Safety.OK())
	return nil
}
