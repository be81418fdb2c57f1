package redisson

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSearchJar: the jar is found from any of the starting directories
// upwards (a program run from outside the checkout finds the one built
// beside it), the first start first; none found is ErrUnavailable.
func TestSearchJar(t *testing.T) {
	repo, elsewhere := t.TempDir(), t.TempDir()
	jar := filepath.Join(repo, jarPath)
	if err := os.MkdirAll(filepath.Dir(jar), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jar, []byte(zipMagic+"rest"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(repo, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := searchJar(elsewhere, bin); err != nil || got != jar {
		t.Errorf("searchJar(elsewhere, repo/bin) = %q, %v; want %s", got, err, jar)
	}
	if _, err := searchJar(elsewhere); !errors.Is(err, ErrUnavailable) {
		t.Errorf("searchJar(elsewhere) = %v, want ErrUnavailable", err)
	}
}
