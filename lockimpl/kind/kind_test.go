package kind_test

import (
	"testing"

	"github.com/lockbench/lockbench/lockimpl/kind"
)

// TestTable: every kind has a name Parse reads back, and a need.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range kind.All() {
		name := k.String()
		if seen[name] {
			t.Errorf("kind %d: name %q is taken", k, name)
		}
		seen[name] = true
		if got, err := kind.Parse(name); err != nil || got != k {
			t.Errorf("Parse(%q) = %v, %v; want %d", name, got, err, k)
		}
		if k.Need() == "" {
			t.Errorf("%s: no need", k)
		}
	}
	if _, err := kind.Parse("spinning"); err == nil {
		t.Error("Parse(spinning) succeeded")
	}
}

// TestProperties: the properties lockimpl and the checker branch on.
func TestProperties(t *testing.T) {
	for _, c := range []struct {
		k                                   kind.Kind
		fair, reentrant, fenced, rw, shared bool
	}{
		{kind.Reentrant, false, true, false, false, false},
		{kind.Fair, true, true, false, false, false},
		{kind.Read, false, true, false, true, true},
		{kind.Write, false, true, false, true, false},
		{kind.Fenced, false, true, true, false, false},
		{kind.Spin, false, true, false, false, false},
		{kind.NonReentrant, false, false, false, false, false},
		{kind.NonReentrantFair, true, false, false, false, false},
	} {
		if c.k.Fair() != c.fair || c.k.Reentrant() != c.reentrant || c.k.Fenced() != c.fenced || c.k.ReadWrite() != c.rw || c.k.Shared() != c.shared {
			t.Errorf("%s: fair %v reentrant %v fenced %v read-write %v shared %v; want %v %v %v %v %v", c.k,
				c.k.Fair(), c.k.Reentrant(), c.k.Fenced(), c.k.ReadWrite(), c.k.Shared(), c.fair, c.reentrant, c.fenced, c.rw, c.shared)
		}
	}
}

func TestList(t *testing.T) {
	for _, c := range []struct {
		ks   []kind.Kind
		want string
	}{
		{nil, ""},
		{[]kind.Kind{kind.Fair}, "fair"},
		{[]kind.Kind{kind.Fair, kind.Spin}, "fair or spin"},
		{[]kind.Kind{kind.Reentrant, kind.Fair, kind.Spin}, "reentrant, fair or spin"},
	} {
		if got := kind.List(c.ks); got != c.want {
			t.Errorf("List(%v) = %q, want %q", c.ks, got, c.want)
		}
	}
}
