package harness

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/workloads"
)

// namedImpl is an implementation that is only a name: loadSettings reads
// no more of it.
type namedImpl string

func (n namedImpl) Name() string                          { return string(n) }
func (namedImpl) Check(workloads.Profile) (string, error) { return "", nil }
func (namedImpl) NewClient(context.Context, redis.UniversalClient, workloads.Profile, int) (workloads.ImplClient, error) {
	return nil, nil
}

// TestLoadSettingsCoverEveryRunOption: every RunOptions field either
// changes the settings the workers of a spread run compare, or says in
// notLoadOptions why it cannot shape the load. A field added to
// RunOptions fails here until it is one or the other.
func TestLoadSettingsCoverEveryRunOption(t *testing.T) {
	base := RunOptions{Impl: namedImpl("lockimpl"), GuardKey: "k"}
	typ := reflect.TypeFor[RunOptions]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		o := base
		v := reflect.ValueOf(&o).Elem().Field(i)
		switch {
		case f.Type == reflect.TypeFor[workloads.Impl]():
			v.Set(reflect.ValueOf(workloads.Impl(namedImpl("redsync"))))
		case v.Kind() == reflect.String:
			v.SetString(v.String() + "-other")
		case v.Kind() == reflect.Bool:
			v.SetBool(!v.Bool())
		case v.CanInt():
			v.SetInt(v.Int() + 1)
		case v.CanFloat():
			v.SetFloat(v.Float() + 1)
		default:
			if _, ok := notLoadOptions[f.Name]; !ok {
				t.Errorf("RunOptions.%s (%s): not in notLoadOptions, and this test cannot change it to see whether loadSettings does", f.Name, f.Type)
			}
			continue
		}
		changed := !slices.Equal(base.loadSettings(), o.loadSettings())
		why, notLoad := notLoadOptions[f.Name]
		switch {
		case changed && notLoad:
			t.Errorf("RunOptions.%s changes the load settings, yet notLoadOptions says %q", f.Name, why)
		case !changed && !notLoad:
			t.Errorf("RunOptions.%s changes no load setting: add it to loadSettings (the workers of a spread run must share it), or to notLoadOptions with why it cannot shape the load", f.Name)
		}
	}
	for name := range notLoadOptions {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("notLoadOptions names %s, which RunOptions lacks", name)
		}
	}
}
