package redisenv

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/moby/moby/client"
)

// FindImage makes sure the engine has image ref: present, or pulled
// within ImagePullTimeout.
func FindImage(ctx context.Context, api client.APIClient, ref string) error {
	if _, err := api.ImageInspect(ctx, ref); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ImagePullTimeout)
	defer cancel()
	pull, err := api.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer pull.Close()
	return pull.Wait(ctx)
}

// ImageRepo is the repository of the images made from a local
// redis-server (BuildImage).
const ImageRepo = "localhost/lockbench-redis"

// builtImages numbers the images this process makes, so that two Envs
// never share (or remove) one.
var builtImages atomic.Int64

var lddPath = regexp.MustCompile(`(/[^\s]+)`)

// BuildImage imports an image of the server binary serverPath names (see
// ServerBinary), the libraries ldd lists for it and an empty /data,
// labelled with this process as its owner, and returns its tag. The
// caller removes it (SweepLeftovers does, once this process is gone). The
// tag comes with an error too once the import was asked for: the image
// may then exist. A cancelled ctx lets the import finish (see MakeGrace).
func BuildImage(ctx context.Context, api client.APIClient, serverPath string) (string, error) {
	bin, err := FindServer(serverPath)
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		return "", fmt.Errorf("ldd %s (an image is made of its libraries): %w", bin, err)
	}
	files := append([]string{bin}, lddPath.FindAllString(string(out), -1)...)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	addDir := func(d string) error {
		for _, part := range parents(d) {
			if dirs[part] {
				continue
			}
			dirs[part] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: part + "/", Mode: 0o755}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range []string{"data", "tmp"} {
		if err := addDir(d); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f) // follows symlinks: the image holds the real files
		if err != nil {
			return "", err
		}
		name := strings.TrimPrefix(f, "/")
		if err := addDir(filepath.Dir(name)); err != nil {
			return "", err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return "", err
		}
		if _, err := tw.Write(b); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	tag := fmt.Sprintf("%s:%d-%d", ImageRepo, os.Getpid(), builtImages.Add(1))
	changes := []string{`ENTRYPOINT [` + strconv.Quote(bin) + `]`, "WORKDIR /data", "EXPOSE 6379"}
	for k, v := range ownerLabels() {
		changes = append(changes, fmt.Sprintf("LABEL %s=%q", k, v))
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	mctx, done := making(ctx)
	defer done()
	res, err := api.ImageImport(mctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, tag,
		client.ImageImportOptions{Changes: changes})
	if err != nil {
		return tag, fmt.Errorf("import: %w", err)
	}
	_, _ = io.Copy(io.Discard, res) // the import is done when its progress ends
	res.Close()
	if err := ctx.Err(); err != nil {
		return tag, err
	}
	if _, err := api.ImageInspect(ctx, tag); err != nil {
		return tag, fmt.Errorf("import of %s: %w", tag, err)
	}
	return tag, nil
}

// parents lists d and its parent directories, outermost first ("a/b" →
// "a", "a/b").
func parents(d string) []string {
	if d == "." || d == "" || d == "/" {
		return nil
	}
	return append(parents(filepath.Dir(d)), d)
}
