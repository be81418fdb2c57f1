package redisenv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/moby/moby/client"
)

// OwnerLabels are the labels that mark what this process makes on an
// engine (OwnerLabel, OwnerSpaceLabel), for things made outside redisenv
// that SweepLeftovers should remove once this process is gone.
func OwnerLabels() map[string]string { return ownerLabels() }

func ownerLabels() map[string]string {
	l := map[string]string{OwnerLabel: ownerOf()}
	if s := pidSpace(); s != "" {
		l[OwnerSpaceLabel] = s
	}
	return l
}

// leftOver reports whether labels name an owner that is gone, made where
// this process runs.
func leftOver(labels map[string]string) bool {
	if s := labels[OwnerSpaceLabel]; s != "" && s != pidSpace() {
		return false
	}
	return OwnerGone(labels[OwnerLabel])
}

// pidSpace names this process's host and pid namespace ("" where the
// system does not tell): where its pid means it. The name tells hosts
// apart (every host's first pid namespace has the same number) and
// survives a reboot, after which the pid and start time tell an owner
// gone.
var pidSpace = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	ns, _ := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	host = strings.Join(strings.Fields(host), "_")
	if host == "" || ns == "" {
		return ""
	}
	return host + "/" + strings.Trim(strings.TrimPrefix(ns, "pid:"), "[]")
})

// SweepLeftovers removes from the engine the containers, networks and
// images whose OwnerLabel names a process that is gone (a lockbench
// killed before its Close); with own, this process's too. It returns one
// line per thing removed.
func SweepLeftovers(ctx context.Context, api client.APIClient, own bool) []string {
	mine := ownerOf()
	left := func(labels map[string]string) (string, bool) {
		label := labels[OwnerLabel]
		return strings.Fields(label + " ?")[0], leftOver(labels) || own && label == mine
	}
	var removed []string
	f := client.Filters{}.Add("label", OwnerLabel)
	// Containers first: they hold the networks and images.
	if cs, err := api.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			pid, ok := left(c.Labels)
			if !ok {
				continue
			}
			if c.State == "paused" { // an engine may refuse to remove a paused container
				_, _ = api.ContainerUnpause(ctx, c.ID, client.ContainerUnpauseOptions{})
			}
			if _, err := api.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err == nil {
				name := c.ID[:min(12, len(c.ID))]
				if len(c.Names) > 0 {
					name = strings.TrimPrefix(c.Names[0], "/")
				}
				removed = append(removed, fmt.Sprintf("container %s (%s, of pid %s)", name, c.Image, pid))
			}
		}
	}
	if ns, err := api.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			if pid, ok := left(n.Labels); ok {
				if _, err := api.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err == nil {
					removed = append(removed, fmt.Sprintf("network %s (of pid %s)", n.Name, pid))
				}
			}
		}
	}
	if is, err := api.ImageList(ctx, client.ImageListOptions{Filters: f}); err == nil {
		for _, img := range is.Items {
			if pid, ok := left(img.Labels); ok {
				if _, err := api.ImageRemove(ctx, img.ID, client.ImageRemoveOptions{Force: true}); err == nil {
					removed = append(removed, fmt.Sprintf("image %s (of pid %s)", strings.Join(img.RepoTags, ","), pid))
				}
			}
		}
	}
	return removed
}
