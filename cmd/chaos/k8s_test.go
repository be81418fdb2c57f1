package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/internal/cli"
)

// TestK8sChaosCronJobArgs: every container of deploy/k8s's chaos CronJob
// runs chaos with args its flag sets accept. runCmd and matrixCmd build
// their flag sets inline, so the args go through the real commands with
// -h after them: the flags before -h are parsed (a renamed one fails
// with exit 2) and nothing runs.
func TestK8sChaosCronJobArgs(t *testing.T) {
	b, err := os.ReadFile("../../deploy/k8s/cronjob-chaos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cj batchv1.CronJob
	if err := yaml.UnmarshalStrict(b, &cj); err != nil {
		t.Fatal(err)
	}
	spec := cj.Spec.JobTemplate.Spec.Template.Spec
	var ran []string
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if !slices.Equal(c.Command, []string{"/chaos"}) || len(c.Args) == 0 {
			t.Errorf("container %s: command %q args %q, want /chaos with a subcommand", c.Name, c.Command, c.Args)
			continue
		}
		ran = append(ran, c.Args[0])
		code, _, stderr := runChaos(t, append(slices.Clone(c.Args), "-h")...)
		if code != cli.ExitOK || strings.Contains(stderr, "not defined") {
			t.Errorf("container %s: chaos %s: exit %d\n%s", c.Name, strings.Join(c.Args, " "), code, stderr)
		}
	}
	if !slices.Equal(ran, []string{"run", "matrix"}) {
		t.Errorf("the CronJob runs chaos %q, want run (the scenarios), then matrix, as make chaos-full does", ran)
	}
	// A renamed flag is caught.
	if code, _, _ := runChaos(t, "run", "--all", "--juint", "x.xml", "-h"); code != cli.ExitUsage {
		t.Errorf("a misspelt flag before -h: exit %d, want %d", code, cli.ExitUsage)
	}
}
