package redisenv

import "testing"

func TestParseInfoNamesTheServer(t *testing.T) {
	for _, tc := range []struct{ info, server, compat, mode string }{
		{"# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n", "redis 7.0.15", "7.0.15", "standalone"},
		// Valkey 9 keeps redis_version 7.2.4 for clients, names itself
		// beside it, and calls redis_mode server_mode.
		{"# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\nserver_mode:cluster\r\n", "valkey 9.1.2", "7.2.4", "cluster"},
		{"", "", "", ""},
	} {
		i := parseInfo(tc.info)
		if i.Server() != tc.server || i.RedisVersion != tc.compat || i.Mode != tc.mode {
			t.Errorf("parseInfo(%q) = server %q, redis_version %q, mode %q; want %q, %q, %q", tc.info, i.Server(), i.RedisVersion, i.Mode, tc.server, tc.compat, tc.mode)
		}
	}
}
