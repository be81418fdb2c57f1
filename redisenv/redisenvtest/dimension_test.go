package redisenvtest

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/redisenv"
)

// A test binary already run on Valkey does not run its tests there twice.
func TestValkeyDimensionSkipsWhenAlreadyOnValkey(t *testing.T) {
	t.Setenv(EnvServer, redisenv.ServerValkey)
	if d := Valkey(""); !strings.Contains(d.Skip, "already ran on valkey") {
		t.Errorf("Valkey() under %s=valkey: skip %q, want it skipped as a repeat", EnvServer, d.Skip)
	}
	t.Setenv(EnvServer, "")
	d := Valkey("TestX")
	if strings.Contains(d.Skip, "already") || d.Run != "TestX" || d.Value != redisenv.ServerValkey {
		t.Errorf("Valkey(TestX) on the default server: %+v, want a run on valkey of TestX", d)
	}
}
