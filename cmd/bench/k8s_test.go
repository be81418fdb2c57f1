package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/workloads"
)

// The manifests in deploy/k8s are checked here as Kubernetes would read
// them (strictly, with its own API types) and as bench would: every
// container's args are parsed by the flag sets bench run and bench collect
// build, so a renamed flag fails these tests.

const k8sDir = "../../deploy/k8s"

// The names the manifests give what they share.
const (
	envJobName      = "metadata.labels['batch.kubernetes.io/job-name']"
	profileKey      = "profile.yaml"
	deadlineMargin  = time.Minute // the workers' push, a stall cut, a slow image pull
	secretRedisKey  = "redis-url"
	secretGuardKey  = "guard-url"
	workersMinCount = 2
)

// manifests are deploy/k8s's objects, decoded.
type manifests struct {
	profile          *corev1.ConfigMap
	secret           *corev1.Secret
	workers, collect *batchv1.Job
	chaos            *batchv1.CronJob
	deployments      []*appsv1.Deployment
	services         []*corev1.Service
}

// kustomization is the part of kustomization.yaml the tests read.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

// decodeObject decodes one YAML document into the API type of its kind,
// refusing unknown and duplicate fields.
func decodeObject(doc []byte) (any, error) {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "batch/v1 CronJob":
		obj = &batchv1.CronJob{}
	default:
		return nil, fmt.Errorf("apiVersion %q kind %q: not a kind these manifests use", tm.APIVersion, tm.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// splitDocs splits a multi-document YAML file at its "---" lines.
func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range strings.Split("\n"+string(b), "\n---\n") {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// loadManifests decodes every resource kustomization.yaml lists, strictly,
// and checks that it lists every manifest in the directory.
func loadManifests(t *testing.T) *manifests {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(k.Resources, base) {
			t.Errorf("%s is not among kustomization.yaml's resources", base)
		}
	}
	m := &manifests{}
	for _, r := range k.Resources {
		b, err := os.ReadFile(filepath.Join(k8sDir, r))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitDocs(b) {
			obj, err := decodeObject(doc)
			if err != nil {
				t.Fatalf("%s, document %d: %v", r, i+1, err)
			}
			switch o := obj.(type) {
			case *corev1.ConfigMap:
				m.profile = o
			case *corev1.Secret:
				m.secret = o
			case *corev1.Service:
				m.services = append(m.services, o)
			case *appsv1.Deployment:
				m.deployments = append(m.deployments, o)
			case *batchv1.CronJob:
				m.chaos = o
			case *batchv1.Job:
				if len(o.Spec.Template.Spec.Containers) > 0 && slices.Contains(o.Spec.Template.Spec.Containers[0].Args, "collect") {
					m.collect = o
				} else {
					m.workers = o
				}
			}
		}
	}
	if m.profile == nil || m.secret == nil || m.workers == nil || m.collect == nil || m.chaos == nil {
		t.Fatalf("deploy/k8s lacks one of the profile ConfigMap, the Secret, the workers Job, the collector Job, the chaos CronJob: %+v", m)
	}
	return m
}

// runArgs parses a bench run command line (args after "run") with bench
// run's own flag set, built as runCmd builds it, and returns the flags and
// the names of those given.
func runArgs(args []string) (runFlags, map[string]bool, error) {
	fs := cli.FlagSet("bench", "run", runUsage, io.Discard)
	var f runFlags
	f.register(fs)
	f.workers.register(fs)
	err := cli.Parse(fs, args)
	return f, given(fs), err
}

// collectArgs parses a bench collect command line as collectCmd does.
func collectArgs(args []string) (collectFlags, map[string]bool, error) {
	fs := cli.FlagSet("bench", "collect", collectUsage, io.Discard)
	var c collectFlags
	c.register(fs)
	err := cli.Parse(fs, args)
	return c, given(fs), err
}

func given(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// podProfile is the profile the ConfigMap holds, with the overrides the
// worker's flags make.
func podProfile(cm *corev1.ConfigMap, f runFlags) (workloads.Profile, error) {
	p, err := workloads.Parse([]byte(cm.Data[profileKey]), ".yaml")
	if err != nil {
		return p, fmt.Errorf("ConfigMap %s %s: %w", cm.Name, profileKey, err)
	}
	for field, v := range f.override {
		if err := p.Set(field, v); err != nil {
			return p, err
		}
	}
	return p, p.Validate()
}

// secretKeys are the keys the Secret manifest holds.
func secretKeys(s *corev1.Secret) map[string]string {
	keys := map[string]string{}
	for k, v := range s.StringData {
		keys[k] = v
	}
	for k, v := range s.Data {
		keys[k] = string(v)
	}
	return keys
}

// envProblems checks the URLs' wiring: each from the Secret, by a key it
// holds; no URL, flag naming one or secret value on the command line.
func envProblems(c corev1.Container, secret *corev1.Secret) []string {
	var probs []string
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	keys := secretKeys(secret)
	for name, key := range map[string]string{redisenv.EnvURL: secretRedisKey, envGuardURL: secretGuardKey} {
		e, ok := env[name]
		switch {
		case !ok:
			probs = append(probs, fmt.Sprintf("container %s: no $%s", c.Name, name))
		case e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil:
			probs = append(probs, fmt.Sprintf("container %s: $%s is not from a Secret", c.Name, name))
		case e.ValueFrom.SecretKeyRef.Name != secret.Name || e.ValueFrom.SecretKeyRef.Key != key:
			probs = append(probs, fmt.Sprintf("container %s: $%s from secret %s key %s, want %s key %s", c.Name, name, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key, secret.Name, key))
		}
		if _, ok := keys[key]; !ok {
			probs = append(probs, fmt.Sprintf("Secret %s has no key %s", secret.Name, key))
		}
	}
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if strings.Contains(a, "://") {
			probs = append(probs, fmt.Sprintf("container %s: a URL in its command line (%q): URLs may hold passwords; pass them in the environment", c.Name, a))
		}
		for _, v := range keys {
			if v != "" && strings.Contains(a, v) {
				probs = append(probs, fmt.Sprintf("container %s: a secret's value in its command line", c.Name))
			}
		}
	}
	return probs
}

// hardeningProblems checks what every lockbench pod shares: it runs once,
// as non-root, on a read-only root with resources set.
func hardeningProblems(spec corev1.PodSpec) []string {
	var probs []string
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		probs = append(probs, fmt.Sprintf("restartPolicy %q, want Never", spec.RestartPolicy))
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		probs = append(probs, "the pod may run as root: set runAsNonRoot and runAsUser")
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			probs = append(probs, fmt.Sprintf("container %s: root filesystem not read-only", c.Name))
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
				probs = append(probs, fmt.Sprintf("container %s: no %s request and limit", c.Name, r))
			}
		}
	}
	return probs
}

// mountedVolume is the volume mounted at dir in c, nil if none.
func mountedVolume(spec corev1.PodSpec, c corev1.Container, dir string) *corev1.Volume {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath != dir {
			continue
		}
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == vm.Name {
				return &spec.Volumes[i]
			}
		}
	}
	return nil
}

// workersProblems checks the workers Job's invariants against the profile
// it runs, the Secret and bench run's flags.
func workersProblems(m *manifests) []string {
	j := m.workers
	spec := j.Spec.Template.Spec
	probs := hardeningProblems(spec)
	if len(spec.Containers) != 1 {
		return append(probs, fmt.Sprintf("%d containers, want one worker", len(spec.Containers)))
	}
	c := spec.Containers[0]
	if len(c.Command) > 0 || len(c.Args) == 0 || c.Args[0] != "run" {
		return append(probs, fmt.Sprintf("command %q args %q: want the image's entrypoint (bench) with args run ...", c.Command, c.Args))
	}
	f, set, err := runArgs(c.Args[1:])
	if err != nil {
		return append(probs, fmt.Sprintf("args %q: %v", c.Args, err))
	}
	if j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
		probs = append(probs, "completionMode is not Indexed: no $JOB_COMPLETION_INDEX")
	}
	n := int32(f.workers.workers)
	if n < workersMinCount {
		probs = append(probs, fmt.Sprintf("--workers %d: a spread run needs 2 or more", n))
	}
	if j.Spec.Parallelism == nil || j.Spec.Completions == nil || *j.Spec.Parallelism != n || *j.Spec.Completions != n {
		probs = append(probs, fmt.Sprintf("parallelism %v, completions %v, want both = --workers %d: every worker runs at once", ptrText(j.Spec.Parallelism), ptrText(j.Spec.Completions), n))
	}
	if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
		probs = append(probs, fmt.Sprintf("backoffLimit %v, want 0: a retried worker would rejoin a finished rendezvous", ptrText(j.Spec.BackoffLimit)))
	}
	for _, name := range []string{"worker-index", "run-id", "spawn-local", "redis-url", "guard-url", "redis"} {
		if set[name] {
			probs = append(probs, fmt.Sprintf("--%s in args: it comes from the pod (the index, the run id) or the Secret (the URLs)", name))
		}
	}
	for _, e := range c.Env {
		if e.Name == envWorkerIndex {
			probs = append(probs, fmt.Sprintf("$%s set by the container: the Indexed Job sets it", envWorkerIndex))
		}
		if e.Name == envRunID && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != envJobName) {
			probs = append(probs, fmt.Sprintf("$%s not from %s: every pod of one Job must share it, and the collector must know it", envRunID, envJobName))
		}
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == envRunID }) {
		probs = append(probs, fmt.Sprintf("no $%s", envRunID))
	}
	probs = append(probs, envProblems(c, m.secret)...)
	if v := mountedVolume(spec, c, filepath.Dir(f.file)); v == nil || v.ConfigMap == nil || v.ConfigMap.Name != m.profile.Name || filepath.Base(f.file) != profileKey {
		probs = append(probs, fmt.Sprintf("--profile-file %q is not %s of ConfigMap %s mounted", f.file, profileKey, m.profile.Name))
	}
	if v := mountedVolume(spec, c, f.out); v == nil || v.EmptyDir == nil {
		probs = append(probs, fmt.Sprintf("--out %q: no emptyDir mounted there (the root filesystem is read-only)", f.out))
	}
	p, err := podProfile(m.profile, f)
	if err != nil {
		return append(probs, err.Error())
	}
	if g := p.Guard; g != "plain" && g != "fenced" {
		probs = append(probs, fmt.Sprintf("the profile's guard is %q: without a guarded store the merged verdict across pods is INCOMPLETE", g))
	}
	for i := range int(n) {
		if _, err := p.Split(i, int(n)); err != nil {
			probs = append(probs, fmt.Sprintf("worker %d of %d: %v", i, n, err))
		}
	}
	need := time.Duration(p.Warmup) + time.Duration(p.Duration) + f.workers.timeout + deadlineMargin
	if d := j.Spec.ActiveDeadlineSeconds; d == nil || time.Duration(*d)*time.Second < need {
		probs = append(probs, fmt.Sprintf("activeDeadlineSeconds %v: warmup %v + duration %v + --rendezvous-timeout %v + %v needs %.0f", ptrText(d), time.Duration(p.Warmup), time.Duration(p.Duration), f.workers.timeout, deadlineMargin, need.Seconds()))
	}
	return probs
}

// collectProblems checks the collector Job: bench collect of the workers
// Job's run, with the same Secret.
func collectProblems(m *manifests) []string {
	spec := m.collect.Spec.Template.Spec
	probs := hardeningProblems(spec)
	if len(spec.Containers) != 1 {
		return append(probs, fmt.Sprintf("%d containers, want one collector", len(spec.Containers)))
	}
	c := spec.Containers[0]
	if len(c.Command) > 0 || len(c.Args) == 0 || c.Args[0] != "collect" {
		return append(probs, fmt.Sprintf("command %q args %q: want the image's entrypoint (bench) with args collect ...", c.Command, c.Args))
	}
	f, set, err := collectArgs(c.Args[1:])
	if err != nil {
		return append(probs, fmt.Sprintf("args %q: %v", c.Args, err))
	}
	runID := f.runID
	for _, e := range c.Env {
		if e.Name == envRunID && !set["run-id"] {
			runID = e.Value
		}
	}
	if runID != m.workers.Name {
		probs = append(probs, fmt.Sprintf("run id %q, want the workers Job's name %q", runID, m.workers.Name))
	}
	for _, name := range []string{"redis-url", "guard-url"} {
		if set[name] {
			probs = append(probs, fmt.Sprintf("--%s in args: the URLs come from the Secret", name))
		}
	}
	probs = append(probs, envProblems(c, m.secret)...)
	if v := mountedVolume(spec, c, f.out); v == nil || v.EmptyDir == nil {
		probs = append(probs, fmt.Sprintf("--out %q: no emptyDir mounted there", f.out))
	}
	if d := m.collect.Spec.ActiveDeadlineSeconds; d == nil || time.Duration(*d)*time.Second < f.wait+f.grace {
		probs = append(probs, fmt.Sprintf("activeDeadlineSeconds %v is shorter than --wait %v + --grace %v", ptrText(d), f.wait, f.grace))
	}
	return probs
}

func ptrText[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// TestK8sManifestsDecodeStrictly: every manifest kustomization.yaml lists
// decodes with the Kubernetes API types, unknown fields refused; a
// misspelt field is caught.
func TestK8sManifestsDecodeStrictly(t *testing.T) {
	m := loadManifests(t)
	if len(m.deployments) != 2 || len(m.services) != 2 {
		t.Errorf("redis.yaml: %d Deployments and %d Services, want the lock's Redis and the guarded store, each with a Service", len(m.deployments), len(m.services))
	}
	if probs := hardeningProblems(m.chaos.Spec.JobTemplate.Spec.Template.Spec); len(probs) > 0 {
		t.Errorf("chaos CronJob: %s", strings.Join(probs, "; "))
	}
	if b := m.chaos.Spec.JobTemplate.Spec.BackoffLimit; b == nil || *b != 0 {
		t.Errorf("chaos CronJob backoffLimit %s, want 0", ptrText(b))
	}
	b, err := os.ReadFile(filepath.Join(k8sDir, "job-workers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	planted := bytes.Replace(b, []byte("  backoffLimit: 0"), []byte("  backoffLimit: 0\n  backofLimit: 0"), 1)
	if _, err := decodeObject(planted); err == nil || !strings.Contains(err.Error(), "backofLimit") {
		t.Errorf("a misspelt field decoded without an error naming it: %v", err)
	}
}

// TestK8sWorkersJob: the workers Job's invariants hold, and each planted
// defect is caught.
func TestK8sWorkersJob(t *testing.T) {
	m := loadManifests(t)
	if probs := workersProblems(m); len(probs) > 0 {
		t.Fatalf("job-workers.yaml:\n%s", strings.Join(probs, "\n"))
	}
	container := func(j *batchv1.Job) *corev1.Container { return &j.Spec.Template.Spec.Containers[0] }
	for _, tc := range []struct {
		name, want string
		plant      func(j *batchv1.Job)
	}{
		{"parallelism-not-workers", "parallelism", func(j *batchv1.Job) { *j.Spec.Parallelism++ }},
		{"retries", "backoffLimit", func(j *batchv1.Job) { *j.Spec.BackoffLimit = 2 }},
		{"not-indexed", "Indexed", func(j *batchv1.Job) { j.Spec.CompletionMode = nil }},
		{"deadline-short", "activeDeadlineSeconds", func(j *batchv1.Job) { *j.Spec.ActiveDeadlineSeconds = 60 }},
		{"renamed-flag", "flag provided but not defined", func(j *batchv1.Job) {
			c := container(j)
			c.Args = append(c.Args, "--worker-count", "3")
		}},
		{"url-in-args", "URL in its command line", func(j *batchv1.Job) {
			c := container(j)
			c.Args = append(c.Args, "--redis-url", "redis://:hunter2@redis:6379")
		}},
		{"index-overridden", envWorkerIndex, func(j *batchv1.Job) {
			c := container(j)
			c.Env = append(c.Env, corev1.EnvVar{Name: envWorkerIndex, Value: "0"})
		}},
		{"run-id-from-uid", envRunID, func(j *batchv1.Job) {
			for i, e := range container(j).Env {
				if e.Name == envRunID {
					container(j).Env[i].ValueFrom.FieldRef.FieldPath = "metadata.uid"
				}
			}
		}},
		{"url-literal", "not from a Secret", func(j *batchv1.Job) {
			c := container(j)
			for i, e := range c.Env {
				if e.Name == redisenv.EnvURL {
					c.Env[i] = corev1.EnvVar{Name: e.Name, Value: "redis://redis:6379"}
				}
			}
		}},
		{"no-cpu-limit", "cpu request and limit", func(j *batchv1.Job) { delete(container(j).Resources.Limits, corev1.ResourceCPU) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planted := *m
			planted.workers = m.workers.DeepCopy()
			tc.plant(planted.workers)
			probs := workersProblems(&planted)
			if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("planted %s: no problem mentioning %q among %q", tc.name, tc.want, probs)
			}
		})
	}
}

// TestK8sCollectJob: the collector collects the workers Job's run, and a
// run id that differs from the Job's name is caught.
func TestK8sCollectJob(t *testing.T) {
	m := loadManifests(t)
	if probs := collectProblems(m); len(probs) > 0 {
		t.Fatalf("job-collect.yaml:\n%s", strings.Join(probs, "\n"))
	}
	planted := *m
	planted.workers = m.workers.DeepCopy()
	planted.workers.Name += "-2"
	if probs := collectProblems(&planted); !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, "run id") }) {
		t.Errorf("a collector of another run's id went unnoticed: %q", probs)
	}
}
