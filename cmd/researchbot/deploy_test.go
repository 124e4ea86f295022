package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	"go.yaml.in/yaml/v4"
)

// The deployment files (Dockerfile, .dockerignore, docker-compose.yml and
// deploy/kubernetes) cannot be run here (no container engine), so these
// tests read them and check what they must promise.

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../.."

// stepGrace is how long a stopping worker gives the step in flight
// (redisstore's WorkerOptions.ShutdownTimeout); containers must be given longer.
const stepGrace = 20 * time.Second

func readRepoFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkHealthcheckCommand asserts that a container health check runs this
// binary's healthcheck subcommand with flags it accepts.
func checkHealthcheckCommand(t *testing.T, where string, argv []string) {
	t.Helper()
	if len(argv) < 2 || argv[0] != "/usr/local/bin/researchbot" || argv[1] != "healthcheck" {
		t.Errorf("%s: health check runs %q, want /usr/local/bin/researchbot healthcheck", where, argv)
		return
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append(argv[1:], "-h"), noEnv, nil, &stdout, &stderr)
	if err != nil || !strings.Contains(stdout.String(), "Usage: researchbot healthcheck") {
		t.Errorf("%s: researchbot %s -h: %v %s", where, strings.Join(argv[1:], " "), err, stderr.String())
	}
}

// pinned matches an image reference with a full version tag, a digest, or
// both (name:tag@sha256:…).
var pinned = regexp.MustCompile(`^[\w./-]+(:v?\d+\.\d+\.\d+[\w.-]*|:v?\d+\.\d+\.\d+[\w.-]*@sha256:[0-9a-f]{64}|@sha256:[0-9a-f]{64})$`)

func TestDockerfile(t *testing.T) {
	df := string(readRepoFile(t, "Dockerfile"))
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1)
	if len(froms) == 0 {
		t.Fatal("no FROM line")
	}
	for _, m := range froms {
		if m[1] != "scratch" && !pinned.MatchString(m[1]) {
			t.Errorf("base image %s is not pinned to a full version", m[1])
		}
	}
	hc := regexp.MustCompile(`(?m)^\s*CMD\s+(\[.*\])\s*$`).FindAllStringSubmatch(df, -1)
	if !strings.Contains(df, "HEALTHCHECK") || len(hc) == 0 {
		t.Fatal("no HEALTHCHECK … CMD [\"…\"]")
	}
	var argv []string
	if err := json.Unmarshal([]byte(hc[0][1]), &argv); err != nil {
		t.Fatalf("HEALTHCHECK CMD %s: %v", hc[0][1], err)
	}
	checkHealthcheckCommand(t, "Dockerfile HEALTHCHECK", argv)
	for _, want := range []string{
		"--mount=type=cache,target=/go/pkg/mod",
		"--mount=type=cache,target=/root/.cache/go-build",
		"-X main.version=${VERSION}",
		"-X main.commit=${COMMIT}",
		`ENTRYPOINT ["/usr/local/bin/researchbot"]`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
	// go mod download runs before the sources are in the build; every
	// directory go.mod replaces a module with must be mounted for it.
	for _, dir := range replaceDirs(t) {
		if !strings.Contains(df, "source="+dir+",") {
			t.Errorf("the Dockerfile's go mod download step does not mount %s, which go.mod replaces a module with", dir)
		}
	}
}

// replaceDirs lists the local directories go.mod replaces modules with.
func replaceDirs(t *testing.T) []string {
	var dirs []string
	for _, m := range regexp.MustCompile(`(?m)^replace\s+\S+(?:\s+\S+)?\s+=>\s+(\.\S*)\s*$`).FindAllStringSubmatch(string(readRepoFile(t, "go.mod")), -1) {
		dirs = append(dirs, filepath.ToSlash(filepath.Clean(m[1])))
	}
	return dirs
}

func TestDockerignore(t *testing.T) {
	patterns, err := ignorefile.ReadAll(bytes.NewReader(readRepoFile(t, ".dockerignore")))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	excluded := func(path string) bool {
		ex, err := pm.MatchesOrParentMatches(path)
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	for _, secret := range []string{".env", ".env.production", "deploy/prod.env", ".git/config", "bin/researchbot", "researchbot", "extract/testdata/article.html"} {
		if !excluded(secret) {
			t.Errorf(".dockerignore lets %s into the build context", secret)
		}
	}
	// Everything the build reads must be in the context.
	needed := append([]string{"go.mod", "go.sum"}, buildInputs(t)...)
	for _, dir := range replaceDirs(t) {
		needed = append(needed, dir+"/go.mod")
	}
	for _, f := range needed {
		if excluded(f) {
			t.Errorf(".dockerignore keeps %s, which the build needs, out of the build context", f)
		}
	}
}

// buildInputs lists the repository's files that go build reads for the
// command: Go and embedded files of every package inside the repository.
func buildInputs(t *testing.T) []string {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-json=Dir,GoFiles,EmbedFiles", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var files []string
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			Dir                 string
			GoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // standard library or module cache
		}
		for _, f := range append(p.GoFiles, p.EmbedFiles...) {
			files = append(files, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	if len(files) < 20 {
		t.Fatalf("go list found only %d of the repository's files: %v", len(files), files)
	}
	return files
}

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string
		Healthcheck struct {
			Test []string
		}
		StopGracePeriod string   `yaml:"stop_grace_period"`
		Ports           []string // "[host-ip:][host-port:]container-port"
		ReadOnly        bool     `yaml:"read_only"`
		SecurityOpt     []string `yaml:"security_opt"`
		CapDrop         []string `yaml:"cap_drop"`
	}
}

func TestComposeFile(t *testing.T) {
	var c composeFile
	if err := yaml.Unmarshal(readRepoFile(t, "docker-compose.yml"), &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	bot, ok := c.Services["researchbot"]
	if !ok {
		t.Fatal("no researchbot service")
	}
	test := bot.Healthcheck.Test
	if len(test) == 0 || test[0] != "CMD" {
		t.Fatalf("researchbot health check %q, want [CMD /usr/local/bin/researchbot healthcheck]", test)
	}
	checkHealthcheckCommand(t, "compose researchbot healthcheck", test[1:])
	grace, err := time.ParseDuration(bot.StopGracePeriod)
	if err != nil || grace <= stepGrace {
		t.Errorf("stop_grace_period %q, want longer than the %v a worker gives the step in flight", bot.StopGracePeriod, stepGrace)
	}
	for name, s := range c.Services {
		if s.Image != "" && !pinned.MatchString(s.Image) {
			t.Errorf("service %s: image %s is not pinned to a full version", name, s.Image)
		}
		if len(s.Healthcheck.Test) == 0 {
			t.Errorf("service %s has no health check", name)
		}
		// /metrics and the health endpoints stay on the compose networks: a
		// port published on the host must be bound to loopback.
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s publishes %q on every host interface", name, p)
			}
		}
		if !s.ReadOnly {
			t.Errorf("service %s: want read_only: true", name)
		}
		if !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("service %s: security_opt %q, want no-new-privileges:true", name, s.SecurityOpt)
		}
		if !slices.Equal(s.CapDrop, []string{"ALL"}) {
			t.Errorf("service %s: cap_drop %q, want [ALL]", name, s.CapDrop)
		}
	}
	if len(c.Services) < 3 {
		t.Errorf("%d services, want redis, researchbot and worker", len(c.Services))
	}
}

// k8sObject is the part of a Kubernetes manifest these tests read.
type k8sObject struct {
	Kind     string
	Metadata struct{ Name string }
	Spec     struct {
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Name, Image string
					Args        []string
					Ports       []struct {
						Name          string
						ContainerPort int `yaml:"containerPort"`
					}
					Env     []struct{ Name, Value string }
					EnvFrom []struct {
						SecretRef *struct{ Name string } `yaml:"secretRef"`
					} `yaml:"envFrom"`
					LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
					ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
					Resources      struct {
						Limits map[string]string
					}
				}
			}
		}
	}
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string
		Port any
	} `yaml:"httpGet"`
}

func readManifests(t *testing.T) map[string]k8sObject {
	names, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	objs := map[string]k8sObject{}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			objs[o.Kind+"/"+o.Metadata.Name] = o
		}
	}
	return objs
}

func TestKubernetesExample(t *testing.T) {
	objs := readManifests(t)
	// serve, and the optional worker replicas: probed, given time to stop.
	for name, command := range map[string]string{"researchbot": "serve", "researchbot-worker": "worker"} {
		checkDeployment(t, objs, name, command)
	}
	redis, ok := objs["StatefulSet/redis"]
	if !ok || len(redis.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("no StatefulSet redis with one container")
	}
	rc := redis.Spec.Template.Spec.Containers[0]
	if !pinned.MatchString(rc.Image) {
		t.Errorf("redis image %s is not pinned to a full version", rc.Image)
	}
	if args := strings.Join(rc.Args, " "); !strings.Contains(args, "--appendonly yes") || !strings.Contains(args, "--maxmemory-policy noeviction") {
		t.Errorf("redis args %q, want the append-only file on and no eviction", args)
	}
}

// TestKubernetesImagesArePinnedByDigest: every image of the Kubernetes
// example is pinned by digest or carries the placeholder docs/deploying.md
// documents (see pinProblem); nothing invents a digest.
func TestKubernetesImagesArePinnedByDigest(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(repoRoot, "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	images := 0
	for _, name := range names {
		for i, line := range strings.Split(string(readRepoFile(t, filepath.Join("deploy", "kubernetes", filepath.Base(name)))), "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "image:")
			if !ok {
				continue
			}
			images++
			if problem := pinProblem(rest); problem != "" {
				t.Errorf("%s:%d: %s", filepath.Base(name), i+1, problem)
			}
		}
	}
	if images < 3 {
		t.Errorf("found %d images, want researchbot, worker and redis", images)
	}
	docs := string(readRepoFile(t, filepath.Join("docs", "deploying.md")))
	for _, want := range []string{"image: redis:7.4.11 # " + pinMarker + " crane digest redis:7.4.11", "crane digest", "docker buildx imagetools inspect", "image: redis:7.4.11@sha256:"} {
		if !strings.Contains(docs, want) {
			t.Errorf("docs/deploying.md does not show %q: the placeholder and how to replace it", want)
		}
	}
}

// pinMarker begins the placeholder of an image not pinned yet; the command
// that prints its digest follows it.
const pinMarker = "PIN BY DIGEST:"

var (
	// byDigest is a pinned image: a full version tag, then a digest.
	byDigest = regexp.MustCompile(`^[a-z0-9][\w./-]*:v?\d+\.\d+\.\d+[\w.-]*@sha256:([0-9a-f]{64})$`)
	// byTag is an image waiting for its digest: a full version tag.
	byTag = regexp.MustCompile(`^[a-z0-9][\w./-]*:v?\d+\.\d+\.\d+[\w.-]*$`)
)

// pinProblem says what is wrong with the value of a manifest's image: line
// (the reference and any comment), or "" when it is one of the two forms
// docs/deploying.md allows: "name:tag@sha256:<64 hex>", or the placeholder
// "name:tag # PIN BY DIGEST: crane digest name:tag" (the command that
// prints that very image's digest).
func pinProblem(value string) string {
	ref, comment, commented := strings.Cut(value, "#")
	ref, comment = strings.TrimSpace(ref), strings.TrimSpace(comment)
	if m := byDigest.FindStringSubmatch(ref); m != nil {
		if strings.Count(m[1], m[1][:1]) == len(m[1]) {
			return "image " + ref + " has a made-up digest"
		}
		if strings.Contains(comment, "PIN BY DIGEST") {
			return "image " + ref + " is pinned but still carries the placeholder: drop the comment"
		}
		return ""
	}
	if strings.Contains(ref, "@") {
		return "image " + ref + " has a malformed digest (want @sha256: and 64 lowercase hex digits, after a full version tag)"
	}
	if !commented || !strings.HasPrefix(comment, pinMarker) {
		return "image " + ref + " is neither pinned by digest (name:tag@sha256:…) nor marked with the placeholder # " + pinMarker + " crane digest " + ref
	}
	if !byTag.MatchString(ref) {
		return "image " + ref + " waits for its digest without a full version tag"
	}
	if cmd := strings.TrimSpace(strings.TrimPrefix(comment, pinMarker)); cmd != "crane digest "+ref {
		return "image " + ref + ": the placeholder's command is " + strconv.Quote(cmd) + ", want " + strconv.Quote("crane digest "+ref)
	}
	return ""
}

// TestPinProblem: the check accepts the two documented forms and refuses
// the ways an unpinned image could slip in.
func TestPinProblem(t *testing.T) {
	digest := "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809"
	for value, ok := range map[string]bool{
		" redis:7.4.11@sha256:" + digest:                            true,
		" registry.example.com/researchbot:v0.1.0@sha256:" + digest: true,
		" redis:7.4.11 # PIN BY DIGEST: crane digest redis:7.4.11":  true,
		" redis:7.4.11":                false, // a bare tag
		" redis:7.4.11 # pinned later": false, // another comment
		" redis:latest # PIN BY DIGEST: crane digest redis:latest":            false, // no version
		" redis:7.4.11 # PIN BY DIGEST: crane digest redis:7.2.0":             false, // another image
		" redis:7.4.11@sha256:" + digest[:63]:                                 false, // 63 digits
		" redis:7.4.11@sha256:" + strings.ToUpper(digest):                     false,
		" redis:7.4.11@sha256:" + strings.Repeat("0", 64):                     false, // invented
		" redis@sha256:" + digest:                                             false, // no tag to read
		" redis:7.4.11@sha256:" + digest + " # PIN BY DIGEST: crane digest x": false, // stale placeholder
	} {
		if got := pinProblem(value); (got == "") != ok {
			t.Errorf("pinProblem(%q) = %q, want ok=%v", value, got, ok)
		}
	}
}

// checkDeployment checks the Deployment name runs command with probes on
// /healthz and /readyz at HTTP_ADDR, the tokens from a Secret, a memory
// limit, and longer than a step's grace to stop.
func checkDeployment(t *testing.T, objs map[string]k8sObject, name, command string) {
	t.Helper()
	dep, ok := objs["Deployment/"+name]
	if !ok {
		t.Fatalf("no Deployment %s among %d objects", name, len(objs))
	}
	pod := dep.Spec.Template.Spec
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= stepGrace {
		t.Errorf("terminationGracePeriodSeconds %v, want longer than %v", g, stepGrace)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != command {
		t.Errorf("%s: args %q, want %s", name, c.Args, command)
	}
	var httpAddr string
	for _, e := range c.Env {
		if e.Name == "HTTP_ADDR" {
			httpAddr = e.Value
		}
	}
	port := 0
	for _, p := range c.Ports {
		if p.Name == "http" {
			port = p.ContainerPort
		}
	}
	if httpAddr == "" || !strings.HasSuffix(httpAddr, ":"+strconv.Itoa(port)) {
		t.Errorf("HTTP_ADDR %q does not listen on the http port %d", httpAddr, port)
	}
	for what, probe := range map[string]struct {
		p    *k8sProbe
		path string
	}{"liveness": {c.LivenessProbe, "/healthz"}, "readiness": {c.ReadinessProbe, "/readyz"}} {
		if probe.p == nil || probe.p.HTTPGet == nil {
			t.Errorf("no %s probe with httpGet", what)
		} else if g := probe.p.HTTPGet; g.Path != probe.path || g.Port != "http" {
			t.Errorf("%s probe GETs %s on port %v, want %s on the http port", what, g.Path, g.Port, probe.path)
		}
	}
	if len(c.EnvFrom) == 0 || c.EnvFrom[0].SecretRef == nil {
		t.Error("the tokens do not come from a Secret (envFrom secretRef)")
	}
	if c.Resources.Limits["memory"] == "" {
		t.Error("no memory limit")
	}
}
