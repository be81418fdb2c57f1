package main

import (
	"archive/tar"
	"bytes"
	"context"
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
