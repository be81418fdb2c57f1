package main

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/lockbench/lockbench/harness"
	"github.com/lockbench/lockbench/internal/cli"
	"github.com/lockbench/lockbench/redisenv"
	"github.com/lockbench/lockbench/redisenv/redisenvtest"
	"github.com/lockbench/lockbench/results"
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

// TestK8sContainerRun runs the manifests' pods on the tests' container
// engine: the image built from the Dockerfile, the workers Job's pod
// template once per index (as the Indexed Job would start it) against a
// Redis and a guarded store in containers, then the collector Job's pod;
// the merged result must have every worker and the guarded store's
// verdict. The pods are made through the engine API (Docker's or
// Podman's), the engine the other container tests use: `podman kube
// play` would tie the test to Podman and bypass the settings the tests'
// own Podman service carries.
func TestK8sContainerRun(t *testing.T) {
	cfg := redisenvtest.ContainerConfig(t)
	start := time.Now()
	api := engineAPI(t)
	m := loadManifests(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	image := buildImage(t, ctx, api)
	built := time.Now()
	lock := redisenvtest.Start(t, cfg)
	store := redisenvtest.Start(t, cfg)
	secret := map[string]string{secretRedisKey: harness.URLOf(lock), secretGuardKey: harness.URLOf(store)}

	// The profile, shortened for a test.
	p, err := workloads.Parse([]byte(m.profile.Data[profileKey]), ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	for field, v := range map[string]string{"duration": "3s", "warmup": "1s"} {
		if err := p.Set(field, v); err != nil {
			t.Fatal(err)
		}
	}
	profileDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(profileDir, profileKey), p.YAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	runID := m.workers.Name + "-" + strconv.Itoa(os.Getpid())
	pod := podRunner{t: t, api: api, image: image, secret: secret, configMaps: map[string]string{m.profile.Name: profileDir}}

	n := int(*m.workers.Spec.Completions)
	ids := make([]string, n)
	for i := range n {
		ids[i] = pod.create(ctx, m.workers.Spec.Template.Spec, runID, map[string]string{envWorkerIndex: strconv.Itoa(i)}, nil)
	}
	for _, id := range ids {
		pod.start(ctx, id)
	}
	for i, id := range ids {
		if code := pod.wait(ctx, id); code != 0 {
			t.Errorf("worker %d exited %d:\n%s", i, code, pod.logs(id))
		}
	}

	// The collector, with its run id pointed at this test's run and its
	// --out on a host dir to read the merged result from.
	out := t.TempDir()
	if err := os.Chmod(out, 0o777); err != nil { // the pod runs as a user of its own
		t.Fatal(err)
	}
	collect := m.collect.Spec.Template.Spec.DeepCopy()
	for i, e := range collect.Containers[0].Env {
		if e.Name == envRunID {
			collect.Containers[0].Env[i].Value = runID
		}
	}
	c, _, err := collectArgs(collect.Containers[0].Args[1:])
	if err != nil {
		t.Fatal(err)
	}
	id := pod.create(ctx, *collect, runID, nil, map[string]string{c.out: out})
	pod.start(ctx, id)
	code := pod.wait(ctx, id)
	logs := pod.logs(id)
	if code != 0 {
		t.Errorf("the collector exited %d:\n%s", code, logs)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*-merged.json"))
	if len(files) != 1 {
		t.Fatalf("want one merged result in %s, got %v\n%s", out, files, logs)
	}
	r, err := results.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case r.Spread == nil || r.Spread.Workers != n || len(r.Spread.Rows) != n:
		t.Errorf("spread %+v, want %d workers with a row each", r.Spread, n)
	case len(r.Spread.MissingWorkers()) > 0:
		t.Errorf("missing workers %v", r.Spread.MissingWorkers())
	}
	for _, row := range rowsOf(r) {
		if row.Ops == 0 {
			t.Errorf("worker %d measured nothing: %+v", row.Index, row)
		}
	}
	if r.Guard == nil || r.Guard.Lost != 0 || r.Guard.Sections == 0 || !r.Guard.Occupancy || r.Guard.Overlaps != 0 {
		t.Errorf("guard %+v, want the guarded store's section: 0 lost updates, 0 overlaps witnessed", r.Guard)
	}
	if fs := r.Failures(); len(fs) > 0 {
		t.Errorf("the merged result failed: %v", fs)
	}
	t.Logf("%d worker pods and the collector: image built in %v, the run in %v; %.0f ops/s, start skew %.0f µs",
		n, built.Sub(start).Round(time.Second), time.Since(built).Round(time.Second), r.Throughput.OpsPerSec, r.Spread.SkewUs)
}

func rowsOf(r *results.Result) []results.WorkerRow {
	if r.Spread == nil {
		return nil
	}
	return r.Spread.Rows
}

// buildImage builds the Dockerfile's image on the engine from a context
// laid out by scripts/image-context.sh (as make image does), labelled as
// this process's, and removes it when t ends.
func buildImage(t *testing.T, ctx context.Context, api client.APIClient) string {
	t.Helper()
	dir := t.TempDir()
	script := exec.CommandContext(ctx, "../../scripts/image-context.sh", filepath.Join(dir, "bin", "image"))
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image-context.sh: %v\n%s", err, out)
	}
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), df, 0o644); err != nil {
		t.Fatal(err)
	}
	var tarball bytes.Buffer
	tw := tar.NewWriter(&tarball)
	if err := tw.AddFS(os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("localhost/lockbench-k8s-test:%d", os.Getpid())
	res, err := api.ImageBuild(ctx, &tarball, client.ImageBuildOptions{Tags: []string{tag}, Dockerfile: "Dockerfile",
		Labels: redisenv.OwnerLabels(), Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	progress, _ := io.ReadAll(res.Body)
	res.Body.Close()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = api.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true})
	})
	if _, err := api.ImageInspect(ctx, tag); err != nil {
		t.Fatalf("the build made no image %s: %v\n%s", tag, err, progress)
	}
	return tag
}

// podRunner starts a pod template's container as the kubelet would, on
// the host's network: the env from the Secret and the downward API, the
// ConfigMaps as read-only dirs, emptyDirs as tmpfs, the user, read-only
// root and CPU and memory limits.
type podRunner struct {
	t          *testing.T
	api        client.APIClient
	image      string
	secret     map[string]string // the Secret's keys
	configMaps map[string]string // a ConfigMap's name → a dir with its files
}

// create makes the container of spec (one, like every lockbench pod
// template's), with extra env (what the Indexed Job adds) and host dirs
// in place of the volumes mounted at binds' keys. It is removed when the
// test ends.
func (p podRunner) create(ctx context.Context, spec corev1.PodSpec, jobName string, extra, binds map[string]string) string {
	t := p.t
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	var env []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == envJobName:
			env = append(env, e.Name+"="+jobName)
		case e.ValueFrom.SecretKeyRef != nil:
			v, ok := p.secret[e.ValueFrom.SecretKeyRef.Key]
			if !ok {
				t.Fatalf("$%s: no key %s in the test's Secret", e.Name, e.ValueFrom.SecretKeyRef.Key)
			}
			env = append(env, e.Name+"="+v)
		default:
			t.Fatalf("$%s: a source the test does not fill: %+v", e.Name, e.ValueFrom)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	hc := &container.HostConfig{NetworkMode: "host", Tmpfs: map[string]string{}}
	for _, vm := range c.VolumeMounts {
		v := mountedVolume(spec, c, vm.MountPath)
		switch {
		case binds[vm.MountPath] != "":
			hc.Binds = append(hc.Binds, binds[vm.MountPath]+":"+vm.MountPath)
		case v != nil && v.ConfigMap != nil && p.configMaps[v.ConfigMap.Name] != "":
			hc.Binds = append(hc.Binds, p.configMaps[v.ConfigMap.Name]+":"+vm.MountPath+":ro")
		case v != nil && v.EmptyDir != nil:
			hc.Tmpfs[vm.MountPath] = "rw,mode=1777"
		default:
			t.Fatalf("volume mount %s: a volume the test does not provide", vm.Name)
		}
	}
	if sc := c.SecurityContext; sc != nil {
		hc.ReadonlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
		if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
			hc.SecurityOpt = append(hc.SecurityOpt, "no-new-privileges")
		}
		if sc.Capabilities != nil {
			for _, d := range sc.Capabilities.Drop {
				hc.CapDrop = append(hc.CapDrop, string(d))
			}
		}
	}
	hc.NanoCPUs = c.Resources.Limits.Cpu().MilliValue() * 1e6
	hc.Memory = c.Resources.Limits.Memory().Value()
	user := ""
	if sc := spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
		user = strconv.FormatInt(*sc.RunAsUser, 10)
		if sc.RunAsGroup != nil {
			user += ":" + strconv.FormatInt(*sc.RunAsGroup, 10)
		}
	}
	cfg := &container.Config{Image: p.image, Env: env, User: user, Labels: redisenv.OwnerLabels(), Cmd: c.Args}
	if len(c.Command) > 0 {
		cfg.Entrypoint = c.Command
	}
	res, err := p.api.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: hc})
	if err != nil {
		t.Fatalf("create the %s container: %v", c.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = p.api.ContainerRemove(ctx, res.ID, client.ContainerRemoveOptions{Force: true})
	})
	return res.ID
}

func (p podRunner) start(ctx context.Context, id string) {
	p.t.Helper()
	if _, err := p.api.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		p.t.Fatalf("start: %v", err)
	}
}

// wait returns the container's exit code once it exits.
func (p podRunner) wait(ctx context.Context, id string) int64 {
	p.t.Helper()
	w := p.api.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	select {
	case r := <-w.Result:
		return r.StatusCode
	case err := <-w.Error:
		p.t.Fatalf("wait: %v\n%s", err, p.logs(id))
	}
	return -1
}

// logs is what the container wrote, stdout and stderr.
func (p podRunner) logs(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := p.api.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		return out.String() + "(logs: " + err.Error() + ")"
	}
	return out.String()
}

// podTemplates are the pod templates of every workload deploy/k8s makes,
// by kind and name.
func (m *manifests) podTemplates() map[string]corev1.PodSpec {
	specs := map[string]corev1.PodSpec{
		"Job " + m.workers.Name:   m.workers.Spec.Template.Spec,
		"Job " + m.collect.Name:   m.collect.Spec.Template.Spec,
		"CronJob " + m.chaos.Name: m.chaos.Spec.JobTemplate.Spec.Template.Spec,
	}
	for _, d := range m.deployments {
		specs["Deployment "+d.Name] = d.Spec.Template.Spec
	}
	return specs
}

// restrictedVolumes are the volume types the restricted Pod Security
// Standard allows.
const restrictedVolumes = "configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret"

// restrictedProblems checks spec against the restricted Pod Security
// Standard as far as deploy/k8s's fields reach: the control plane's own
// admission (make test-k8s) is the full check, this one fails in make
// test. Every container needs allowPrivilegeEscalation false, capabilities
// drop ALL (adding at most NET_BIND_SERVICE), runAsNonRoot and seccomp
// RuntimeDefault or Localhost (its own or the pod's); a numeric non-root
// runAsUser is required too, since an image whose user is root or a name
// (redis's) cannot be checked against runAsNonRoot by the kubelet.
func restrictedProblems(spec corev1.PodSpec) []string {
	var probs []string
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		probs = append(probs, "the pod shares the host's network, PID or IPC namespace")
	}
	for _, v := range spec.Volumes {
		s := v.VolumeSource
		if s.ConfigMap == nil && s.CSI == nil && s.DownwardAPI == nil && s.EmptyDir == nil && s.Ephemeral == nil &&
			s.PersistentVolumeClaim == nil && s.Projected == nil && s.Secret == nil {
			probs = append(probs, fmt.Sprintf("volume %s: a type outside %s", v.Name, restrictedVolumes))
		}
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if sc.Privileged != nil && *sc.Privileged {
			probs = append(probs, fmt.Sprintf("container %s: privileged", c.Name))
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			probs = append(probs, fmt.Sprintf("container %s: allowPrivilegeEscalation is not false", c.Name))
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			probs = append(probs, fmt.Sprintf("container %s: capabilities do not drop ALL", c.Name))
		}
		if sc.Capabilities != nil && slices.ContainsFunc(sc.Capabilities.Add, func(c corev1.Capability) bool { return c != "NET_BIND_SERVICE" }) {
			probs = append(probs, fmt.Sprintf("container %s: adds capabilities %v (only NET_BIND_SERVICE is allowed)", c.Name, sc.Capabilities.Add))
		}
		if nonRoot := cmp.Or(sc.RunAsNonRoot, psc.RunAsNonRoot); nonRoot == nil || !*nonRoot {
			probs = append(probs, fmt.Sprintf("container %s: runAsNonRoot is not true (on it or the pod)", c.Name))
		}
		if uid := cmp.Or(sc.RunAsUser, psc.RunAsUser); uid == nil || *uid == 0 {
			probs = append(probs, fmt.Sprintf("container %s: no numeric non-root runAsUser (on it or the pod)", c.Name))
		}
		if sp := cmp.Or(sc.SeccompProfile, psc.SeccompProfile); sp == nil || (sp.Type != corev1.SeccompProfileTypeRuntimeDefault && sp.Type != corev1.SeccompProfileTypeLocalhost) {
			probs = append(probs, fmt.Sprintf("container %s: seccompProfile is not RuntimeDefault or Localhost (on it or the pod)", c.Name))
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				probs = append(probs, fmt.Sprintf("container %s: hostPort %d", c.Name, p.HostPort))
			}
		}
	}
	return probs
}

// TestK8sRestricted: every pod deploy/k8s makes passes the restricted Pod
// Security Standard, and each planted defect is caught.
func TestK8sRestricted(t *testing.T) {
	m := loadManifests(t)
	templates := m.podTemplates()
	if len(templates) != 3+len(m.deployments) {
		t.Fatalf("%d pod templates, want the two Jobs', the CronJob's and the Deployments'", len(templates))
	}
	for name, spec := range templates {
		if probs := restrictedProblems(spec); len(probs) > 0 {
			t.Errorf("%s fails the restricted Pod Security Standard:\n%s", name, strings.Join(probs, "\n"))
		}
	}
	for _, d := range m.deployments {
		spec := d.Spec.Template.Spec
		if v := mountedVolume(spec, spec.Containers[0], "/data"); v == nil || v.EmptyDir == nil {
			t.Errorf("Deployment %s: no emptyDir at /data, redis's working directory: a non-root redis cannot write the image's", d.Name)
		}
	}
	sc := func(s *corev1.PodSpec) *corev1.SecurityContext { return s.Containers[0].SecurityContext }
	for _, tc := range []struct {
		name, want string
		plant      func(s *corev1.PodSpec)
	}{
		{"escalation", "allowPrivilegeEscalation", func(s *corev1.PodSpec) { sc(s).AllowPrivilegeEscalation = nil }},
		{"caps-kept", "drop ALL", func(s *corev1.PodSpec) { sc(s).Capabilities.Drop = nil }},
		{"cap-added", "NET_BIND_SERVICE", func(s *corev1.PodSpec) { sc(s).Capabilities.Add = []corev1.Capability{"NET_ADMIN"} }},
		{"root-allowed", "runAsNonRoot", func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil }},
		{"root-user", "runAsUser", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.RunAsUser = new(int64) }},
		{"no-seccomp", "seccompProfile", func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil }},
		{"unconfined", "seccompProfile", func(s *corev1.PodSpec) {
			sc(s).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}},
		{"host-path", "volume", func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}},
		{"host-network", "host's network", func(s *corev1.PodSpec) { s.HostNetwork = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, spec := range templates {
				planted := spec.DeepCopy()
				tc.plant(planted)
				probs := restrictedProblems(*planted)
				if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, tc.want) }) {
					t.Errorf("%s, planted %s: no problem mentioning %q among %q", name, tc.name, tc.want, probs)
				}
			}
		})
	}
}

// envK8sNamespace names the namespace TestK8sControlPlane makes; make
// test-k8s sets it, on the control plane scripts/kube-testenv.sh starts.
// Unset, the test skips: it never touches the cluster of a $KUBECONFIG by
// chance.
const envK8sNamespace = "LOCKBENCH_K8S_NAMESPACE"

// indexFieldPaths are where the Job controller may take the
// $JOB_COMPLETION_INDEX it adds from: the pod's completion-index label (as
// v1.37 does) or the annotation of that name (as older releases did).
var indexFieldPaths = []string{
	"metadata.labels['" + batchv1.JobCompletionIndexAnnotation + "']",
	"metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']",
}

// TestK8sControlPlane applies deploy/k8s to a real API server, in a
// namespace that enforces the restricted Pod Security Standard, and checks
// what the controllers made of it: the pods admitted with no warning, the
// Jobs complete, one worker pod per completion index, and each pod's
// environment as bench reads it. kwok stands in for the kubelet: pods are
// scheduled onto its fake node and reported Running, Job pods Succeeded;
// no container runs (TestK8sContainerRun runs them).
func TestK8sControlPlane(t *testing.T) {
	ns := os.Getenv(envK8sNamespace)
	if ns == "" {
		t.Skipf("$%s unset: make test-k8s runs this test on a control plane of its own", envK8sNamespace)
	}
	m := loadManifests(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	k := kubectl{t: t, ctx: ctx, ns: ns}

	var version struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(k.quiet("", "version", "--output=json")), &version); err != nil {
		t.Fatalf("kubectl version: %v", err)
	}
	t.Logf("kubectl %s, API server %s", version.ClientVersion.GitVersion, version.ServerVersion.GitVersion)
	k.quiet(fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/warn-version: latest
`, ns), "apply", "--warnings-as-errors", "-f", "-")
	k.await("the namespace's default ServiceAccount", func() (bool, string) {
		_, err := k.output("get", "serviceaccount", "default", "-n", ns)
		return err == nil, fmt.Sprint(err)
	})
	t.Logf("namespace %s: Pod Security Standard restricted enforced and warned", ns)

	// Warnings (a PodSecurity one, a deprecated field) fail: every object
	// must be accepted as it is.
	out := k.quiet("", "apply", "--validate=strict", "--warnings-as-errors", "-n", ns, "-k", k8sDir)
	t.Logf("kubectl apply -k deploy/k8s: no warnings; %d objects:\n%s", strings.Count(strings.TrimSpace(out), "\n")+1, out)
	// The CronJob runs at night: a Job from its template now shows that its
	// pod is admitted too.
	chaosJob := m.chaos.Name + "-now"
	k.quiet("", "create", "job", chaosJob, "--from=cronjob/"+m.chaos.Name, "--warnings-as-errors", "-n", ns)

	for _, name := range []string{m.workers.Name, m.collect.Name, chaosJob} {
		k.awaitJob(name)
	}
	for _, d := range m.deployments {
		k.await("Deployment "+d.Name+" available", func() (bool, string) {
			var got appsv1.Deployment
			k.get(&got, "deployment", d.Name)
			return got.Status.AvailableReplicas == *d.Spec.Replicas, fmt.Sprintf("%d of %d replicas available", got.Status.AvailableReplicas, *d.Spec.Replicas)
		})
	}

	var secret corev1.Secret
	k.get(&secret, "secret", m.secret.Name)
	var profile corev1.ConfigMap
	k.get(&profile, "configmap", m.profile.Name)
	objects := clusterObjects{secrets: map[string]*corev1.Secret{secret.Name: &secret}, configMaps: map[string]*corev1.ConfigMap{profile.Name: &profile}}

	// The workers: what the Job controller did, pod by pod.
	n := int(*m.workers.Spec.Completions)
	var job batchv1.Job
	k.get(&job, "job", m.workers.Name)
	if int(job.Status.Succeeded) != n || job.Status.Failed != 0 || job.Status.CompletedIndexes != indexRange(n) {
		t.Errorf("Job %s: succeeded %d, failed %d, completedIndexes %q; want %d, 0, %q", job.Name, job.Status.Succeeded, job.Status.Failed, job.Status.CompletedIndexes, n, indexRange(n))
	}
	pods := k.jobPods(m.workers.Name)
	if len(pods) != n {
		t.Errorf("Job %s made %d pods, want %d: one per index, none retried", m.workers.Name, len(pods), n)
	}
	seen := map[int]string{}
	for _, pod := range pods {
		index, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
		switch {
		case err != nil || index < 0 || index >= n:
			t.Errorf("pod %s: completion index annotation %s=%q, want 0..%d", pod.Name, batchv1.JobCompletionIndexAnnotation, pod.Annotations[batchv1.JobCompletionIndexAnnotation], n-1)
			continue
		case seen[index] != "":
			t.Errorf("pods %s and %s both have completion index %d", seen[index], pod.Name, index)
		}
		seen[index] = pod.Name
		k.checkWorkerPod(m, objects, pod, index)
	}
	if len(seen) == n {
		t.Logf("Job %s: complete, %d pods, completedIndexes %q", m.workers.Name, n, job.Status.CompletedIndexes)
	}

	// The collector: the workers' run id, and the same stores.
	if pods := k.jobPods(m.collect.Name); len(pods) != 1 {
		t.Errorf("Job %s made %d pods, want 1", m.collect.Name, len(pods))
	} else {
		k.checkCollectPod(m, objects, pods[0])
	}
	if pods := k.jobPods(chaosJob); len(pods) != 1 {
		t.Errorf("Job %s (from CronJob %s) made %d pods, want 1", chaosJob, m.chaos.Name, len(pods))
	} else {
		t.Logf("CronJob %s: a Job from it made pod %s, admitted and %s", m.chaos.Name, pods[0].Name, pods[0].Status.Phase)
	}
	for _, d := range m.deployments {
		var rs corev1.PodList
		k.get(&rs, "pods", "-l", "app.kubernetes.io/component="+d.Spec.Selector.MatchLabels["app.kubernetes.io/component"])
		for _, pod := range rs.Items {
			if pod.Status.Phase != corev1.PodRunning {
				t.Errorf("Deployment %s: pod %s is %s, want Running", d.Name, pod.Name, pod.Status.Phase)
			}
		}
		t.Logf("Deployment %s: %d pod(s) admitted and Running", d.Name, len(rs.Items))
	}
}

// checkWorkerPod checks a worker pod's environment as the Job controller
// and the manifests made it, then reads it as bench run does.
func (k kubectl) checkWorkerPod(m *manifests, objects clusterObjects, pod corev1.Pod, index int) {
	t := k.t
	t.Helper()
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("pod %s is %s, want Succeeded", pod.Name, pod.Status.Phase)
	}
	if got := pod.Labels[batchv1.JobNameLabel]; got != m.workers.Name {
		t.Errorf("pod %s: label %s=%q, want the Job's name %q", pod.Name, batchv1.JobNameLabel, got, m.workers.Name)
	}
	c, env, from := objects.containerEnv(t, pod, m.workers.Spec.Template.Spec.Containers[0].Name)
	if c == nil {
		return
	}
	if got := pod.Labels[batchv1.JobCompletionIndexAnnotation]; got != strconv.Itoa(index) {
		t.Errorf("pod %s: label %s=%q, want its annotation's %d", pod.Name, batchv1.JobCompletionIndexAnnotation, got, index)
	}
	indexFrom := "fieldRef " + indexFieldPaths[0]
	if i := slices.Index(indexFieldPaths, strings.TrimPrefix(from[envWorkerIndex], "fieldRef ")); i >= 0 {
		indexFrom = from[envWorkerIndex]
	}
	want := map[string]struct{ source, value string }{
		envWorkerIndex:  {indexFrom, strconv.Itoa(index)},
		envRunID:        {"fieldRef " + envJobName, m.workers.Name},
		redisenv.EnvURL: {"secretKeyRef " + m.secret.Name + "/" + secretRedisKey, string(objects.secrets[m.secret.Name].Data[secretRedisKey])},
		envGuardURL:     {"secretKeyRef " + m.secret.Name + "/" + secretGuardKey, string(objects.secrets[m.secret.Name].Data[secretGuardKey])},
	}
	wired := true
	for name, w := range want {
		switch {
		case from[name] == "":
			t.Errorf("pod %s: no $%s in container %s's environment", pod.Name, name, c.Name)
		case from[name] != w.source || env[name] != w.value:
			t.Errorf("pod %s: $%s from %s is %q, want from %s: %q", pod.Name, name, from[name], env[name], w.source, w.value)
		default:
			continue
		}
		wired = false
	}
	if !wired {
		return
	}

	// bench run, with this pod's args and environment: the worker it
	// would be.
	f, _, err := runArgs(c.Args[1:])
	if err != nil {
		t.Fatalf("pod %s: args %q: %v", pod.Name, c.Args, err)
	}
	f.file = objects.mountedFile(t, pod, *c, f.file)
	for name := range want {
		t.Setenv(name, env[name])
	}
	p, err := f.load()
	if err == nil {
		err = f.workers.check(&f, p)
	}
	if err != nil {
		t.Errorf("pod %s: bench run %s with its environment: %v", pod.Name, strings.Join(c.Args[1:], " "), err)
		return
	}
	_, startsRedis := f.redis.PlannedReplicas()
	switch {
	case f.workers.mustIndex() != index || f.workers.workers != int(*m.workers.Spec.Completions):
		t.Errorf("pod %s: bench run reads worker %d of %d, want %d of %d", pod.Name, f.workers.mustIndex(), f.workers.workers, index, *m.workers.Spec.Completions)
	case f.workers.runID != m.workers.Name:
		t.Errorf("pod %s: bench run reads run id %q, want %q", pod.Name, f.workers.runID, m.workers.Name)
	case startsRedis:
		t.Errorf("pod %s: bench run would start a Redis of its own: $%s did not reach it", pod.Name, redisenv.EnvURL)
	case f.guardURL != want[envGuardURL].value:
		t.Errorf("pod %s: bench run reads guard URL %q, want the Secret's %q", pod.Name, f.guardURL, want[envGuardURL].value)
	}
	t.Logf("pod %s: index %d; $%s from %s = %s, $%s from %s = %s, $%s and $%s from Secret %s; bench run reads worker %d of %d of run %s, profile %s from ConfigMap %s",
		pod.Name, index, envWorkerIndex, from[envWorkerIndex], env[envWorkerIndex], envRunID, from[envRunID], env[envRunID],
		redisenv.EnvURL, envGuardURL, m.secret.Name, f.workers.mustIndex(), f.workers.workers, f.workers.runID, p.Name, m.profile.Name)
}

// checkCollectPod reads the collector pod's args and environment as bench
// collect does.
func (k kubectl) checkCollectPod(m *manifests, objects clusterObjects, pod corev1.Pod) {
	t := k.t
	t.Helper()
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Errorf("pod %s is %s, want Succeeded", pod.Name, pod.Status.Phase)
	}
	c, env, _ := objects.containerEnv(t, pod, m.collect.Spec.Template.Spec.Containers[0].Name)
	if c == nil {
		return
	}
	f, _, err := collectArgs(c.Args[1:])
	if err != nil {
		t.Fatalf("pod %s: args %q: %v", pod.Name, c.Args, err)
	}
	for _, name := range []string{envRunID, redisenv.EnvURL, envGuardURL} {
		t.Setenv(name, env[name])
	}
	secret := objects.secrets[m.secret.Name]
	switch err := f.check(); {
	case err != nil:
		t.Errorf("pod %s: bench collect %s with its environment: %v", pod.Name, strings.Join(c.Args[1:], " "), err)
	case f.runID != m.workers.Name:
		t.Errorf("pod %s: bench collect reads run id %q, want the workers Job's name %q", pod.Name, f.runID, m.workers.Name)
	case f.redisURL != string(secret.Data[secretRedisKey]) || f.guardURL != string(secret.Data[secretGuardKey]):
		t.Errorf("pod %s: bench collect reads stores %q and %q, want Secret %s's", pod.Name, f.redisURL, f.guardURL, secret.Name)
	default:
		t.Logf("pod %s: bench collect reads run id %s and the stores of Secret %s", pod.Name, f.runID, secret.Name)
	}
}

// indexRange is a Job's completedIndexes when indexes 0..n-1 succeeded, as
// the Job controller writes it ("0", "0,1", "0-2").
func indexRange(n int) string {
	switch n {
	case 1:
		return "0"
	case 2:
		return "0,1"
	}
	return fmt.Sprintf("0-%d", n-1)
}

// kubectl runs the kubectl on $PATH in the test's namespace.
type kubectl struct {
	t   *testing.T
	ctx context.Context
	ns  string
}

// output runs kubectl and returns its stdout; a failure's error holds
// its stderr.
func (k kubectl) output(args ...string) (string, error) {
	out, _, err := k.run("", args...)
	return out, err
}

func (k kubectl) run(stdin string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(k.ctx, "kubectl", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err = cmd.Run(); err != nil {
		err = fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, e.String())
	}
	return o.String(), e.String(), err
}

// quiet runs kubectl and fails the test when it fails or writes anything
// to stderr, where it prints the API server's warnings.
func (k kubectl) quiet(stdin string, args ...string) string {
	k.t.Helper()
	out, stderr, err := k.run(stdin, args...)
	switch {
	case err != nil:
		k.t.Fatalf("%v", err)
	case strings.TrimSpace(stderr) != "":
		k.t.Fatalf("kubectl %s printed (warnings fail this test):\n%s", strings.Join(args, " "), stderr)
	}
	return out
}

// get decodes kubectl get ARGS -o json in the namespace into obj.
func (k kubectl) get(obj any, args ...string) {
	k.t.Helper()
	out, err := k.output(append([]string{"get", "-n", k.ns, "-o", "json"}, args...)...)
	if err != nil {
		k.t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), obj); err != nil {
		k.t.Fatalf("kubectl get %s: %v", strings.Join(args, " "), err)
	}
}

// jobPods are the pods of the Job named name.
func (k kubectl) jobPods(name string) []corev1.Pod {
	k.t.Helper()
	var pods corev1.PodList
	k.get(&pods, "pods", "-l", batchv1.JobNameLabel+"="+name)
	return pods.Items
}

// await polls done until it holds; at the deadline the test fails with
// done's last word and the namespace's Warning events, where a pod
// refused by Pod Security shows.
func (k kubectl) await(what string, done func() (bool, string)) {
	k.t.Helper()
	start := time.Now()
	for {
		ok, state := done()
		if ok {
			return
		}
		select {
		case <-k.ctx.Done():
			k.t.Fatalf("%s: not after %v (%s)%s", what, time.Since(start).Round(time.Second), state, k.warnings())
		case <-time.After(time.Second):
		}
	}
}

// awaitJob waits for the Job's Complete condition and fails at once on
// its Failed condition.
func (k kubectl) awaitJob(name string) {
	k.t.Helper()
	k.await("Job "+name+" complete", func() (bool, string) {
		var j batchv1.Job
		k.get(&j, "job", name)
		for _, c := range j.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			switch c.Type {
			case batchv1.JobComplete:
				return true, ""
			case batchv1.JobFailed:
				k.t.Fatalf("Job %s failed: %s: %s%s", name, c.Reason, c.Message, k.warnings())
			}
		}
		return false, fmt.Sprintf("active %d, succeeded %d, failed %d", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
	})
}

// warnings are the namespace's Warning events, one a line.
func (k kubectl) warnings() string {
	var events corev1.EventList
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _, err := kubectl{t: k.t, ctx: ctx, ns: k.ns}.run("", "get", "events", "-n", k.ns, "--field-selector", "type=Warning", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &events) != nil {
		return fmt.Sprintf("\n(no events: %v)", err)
	}
	var b strings.Builder
	for _, e := range events.Items {
		fmt.Fprintf(&b, "\n  %s %s: %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	if b.Len() == 0 {
		return "\n(no Warning events)"
	}
	return "\nWarning events:" + b.String()
}

// clusterObjects are the Secrets and ConfigMaps a pod's environment and
// volumes refer to, as the API server holds them.
type clusterObjects struct {
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

// containerEnv resolves the environment of pod's container name as the
// kubelet would: each variable's value, and where it came from.
func (o clusterObjects) containerEnv(t *testing.T, pod corev1.Pod, name string) (*corev1.Container, map[string]string, map[string]string) {
	t.Helper()
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		t.Errorf("pod %s: no container %s", pod.Name, name)
		return nil, nil, nil
	}
	c := &pod.Spec.Containers[i]
	env, from := map[string]string{}, map[string]string{}
	for _, e := range c.Env {
		switch s := e.ValueFrom; {
		case s == nil:
			env[e.Name], from[e.Name] = e.Value, "value"
		case s.FieldRef != nil:
			v, ok := fieldValue(pod, s.FieldRef.FieldPath)
			if !ok {
				t.Errorf("pod %s: $%s: fieldRef %s resolves to nothing", pod.Name, e.Name, s.FieldRef.FieldPath)
			}
			env[e.Name], from[e.Name] = v, "fieldRef "+s.FieldRef.FieldPath
		case s.SecretKeyRef != nil:
			sec, ok := o.secrets[s.SecretKeyRef.Name]
			v, has := []byte(nil), false
			if ok {
				v, has = sec.Data[s.SecretKeyRef.Key]
			}
			if !has {
				t.Errorf("pod %s: $%s: no key %s in Secret %s", pod.Name, e.Name, s.SecretKeyRef.Key, s.SecretKeyRef.Name)
			}
			env[e.Name], from[e.Name] = string(v), "secretKeyRef "+s.SecretKeyRef.Name+"/"+s.SecretKeyRef.Key
		case s.ConfigMapKeyRef != nil:
			cm, ok := o.configMaps[s.ConfigMapKeyRef.Name]
			v, has := "", false
			if ok {
				v, has = cm.Data[s.ConfigMapKeyRef.Key]
			}
			if !has {
				t.Errorf("pod %s: $%s: no key %s in ConfigMap %s", pod.Name, e.Name, s.ConfigMapKeyRef.Key, s.ConfigMapKeyRef.Name)
			}
			env[e.Name], from[e.Name] = v, "configMapKeyRef "+s.ConfigMapKeyRef.Name+"/"+s.ConfigMapKeyRef.Key
		default:
			t.Errorf("pod %s: $%s: a source this test does not resolve: %+v", pod.Name, e.Name, s)
		}
	}
	return c, env, from
}

// fieldValue is what the downward API gives for path on pod (the paths
// env fieldRefs take from metadata).
func fieldValue(pod corev1.Pod, path string) (string, bool) {
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok && strings.HasSuffix(key, "']") {
			v, ok := m[strings.TrimSuffix(key, "']")]
			return v, ok
		}
	}
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	}
	return "", false
}

// mountedFile writes the ConfigMap file the pod would see at path into a
// directory of the test's, and returns its path there.
func (o clusterObjects) mountedFile(t *testing.T, pod corev1.Pod, c corev1.Container, path string) string {
	t.Helper()
	v := mountedVolume(pod.Spec, c, filepath.Dir(path))
	if v == nil || v.ConfigMap == nil || o.configMaps[v.ConfigMap.Name] == nil {
		t.Fatalf("pod %s: %s is not in a ConfigMap mounted in container %s", pod.Name, path, c.Name)
	}
	data, ok := o.configMaps[v.ConfigMap.Name].Data[filepath.Base(path)]
	if !ok {
		t.Fatalf("pod %s: ConfigMap %s mounted at %s has no key %s", pod.Name, v.ConfigMap.Name, filepath.Dir(path), filepath.Base(path))
	}
	local := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(local, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return local
}
