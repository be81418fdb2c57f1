package redisenv

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ParseURL turns the external backend's address into go-redis
// UniversalOptions. Accepted forms:
//
//	redis://[user:password@]host:port[/db][?option=value...]   one server
//	rediss://...                                               the same over TLS
//	host:port[,host:port...]                                   cluster seed nodes (two or more)
//	redis://[user:password@]h1:port,h2:port[?...]              cluster seed nodes with credentials
//	redis-sentinel://[user:password@]h1:26379[,h2:26379][/db]?master_name=NAME[&password=...]
//	rediss-sentinel://...                                      the same over TLS
//
// Options in the query are go-redis's own (dial_timeout, read_timeout,
// pool_size, skip_verify, ...). For sentinel URLs the userinfo authenticates
// to the sentinels and the username/password query options to the primary,
// as in go-redis's ParseFailoverURL. Errors name the field at fault and
// never contain a password.
func ParseURL(raw string) (*redis.UniversalOptions, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, &ConfigError{Field: "redis-url", Fix: "empty URL; use redis://host:6379/0"}
	}
	bad := func(field, fix string) error {
		return &ConfigError{Field: "redis-url", Value: Redact(raw), Fix: "field " + field + ": " + fix}
	}

	scheme, userinfo, hostlist, tail, hasScheme := splitURL(raw)
	if !hasScheme {
		if userinfo != "" {
			return nil, bad("scheme", "credentials need a URL: use redis://user:password@host:port/0")
		}
		// A bare host:port list: cluster seeds, or one server.
		hosts := strings.Split(raw, ",")
		for _, h := range hosts {
			if err := checkHostPort(h); err != nil {
				return nil, bad("host", err.Error()+"; use host:port or redis://host:port/0")
			}
		}
		if len(hosts) == 1 {
			return ParseURL("redis://" + raw)
		}
		return &redis.UniversalOptions{Addrs: hosts, IsClusterMode: true}, nil
	}

	sentinel := false
	switch strings.ToLower(scheme) {
	case "redis", "rediss":
	case "redis-sentinel", "redis+sentinel":
		scheme, sentinel = "redis", true
	case "rediss-sentinel", "rediss+sentinel":
		scheme, sentinel = "rediss", true
	default:
		return nil, bad("scheme", fmt.Sprintf("%q is not supported; use redis://, rediss://, redis-sentinel:// or rediss-sentinel://", scheme))
	}

	hosts := strings.Split(hostlist, ",")
	for i, h := range hosts {
		if h == "" {
			return nil, bad("host", "missing; use redis://host:6379/0")
		}
		if !strings.Contains(h, ":") || strings.HasSuffix(h, "]") {
			port := "6379"
			if sentinel {
				port = "26379"
			}
			hosts[i] = net.JoinHostPort(strings.Trim(h, "[]"), port)
		}
		if err := checkHostPort(hosts[i]); err != nil {
			return nil, bad("host", err.Error())
		}
	}
	at := ""
	if userinfo != "" {
		at = userinfo + "@"
		// net/url's errors quote what they fail on, which may be a piece
		// of the password: check the rest of the URL without it first.
		if _, err := url.Parse(scheme + "://" + hosts[0] + tail); err == nil {
			if _, err := url.Parse(scheme + "://" + at + hosts[0]); err != nil {
				return nil, bad("userinfo", "not a valid user:password; percent-encode special characters (e.g. %40 for @)")
			}
		}
	}

	// Validate with net/url ourselves so its errors, which quote the whole
	// URL, never reach the caller.
	u, err := url.Parse(scheme + "://" + at + hosts[0] + tail)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, bad("url", err.Error())
	}
	q := u.Query()
	if u.Fragment != "" {
		return nil, bad("fragment", "not supported; put options in the query, e.g. ?master_name=mymaster")
	}
	path := strings.Trim(u.Path, "/")
	if path != "" {
		if n, err := strconv.Atoi(path); err != nil || n < 0 {
			return nil, bad("db", fmt.Sprintf("%q is not a database number; use /0 to /15 (or drop the path)", path))
		}
	}
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	u.RawQuery = q.Encode()

	switch {
	case sentinel:
		if q.Get("master_name") == "" {
			return nil, bad("master_name", "required for sentinel URLs; add ?master_name=mymaster")
		}
		fo, err := redis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, bad("option", scrub(err, raw))
		}
		return &redis.UniversalOptions{
			Addrs:            fo.SentinelAddrs,
			MasterName:       fo.MasterName,
			SentinelUsername: fo.SentinelUsername,
			SentinelPassword: fo.SentinelPassword,
			Username:         fo.Username,
			Password:         fo.Password,
			DB:               fo.DB,
			TLSConfig:        fo.TLSConfig,
			DialTimeout:      fo.DialTimeout,
			ReadTimeout:      fo.ReadTimeout,
			WriteTimeout:     fo.WriteTimeout,
			PoolSize:         fo.PoolSize,
			MaxRetries:       fo.MaxRetries,
			ClientName:       fo.ClientName,
			Protocol:         fo.Protocol,
		}, nil
	case len(hosts) > 1:
		if path != "" && path != "0" {
			return nil, bad("db", "Redis Cluster has only database 0; drop the path")
		}
		u.Path = ""
		co, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, bad("option", scrub(err, raw))
		}
		return &redis.UniversalOptions{
			Addrs:         co.Addrs,
			IsClusterMode: true,
			Username:      co.Username,
			Password:      co.Password,
			TLSConfig:     co.TLSConfig,
			DialTimeout:   co.DialTimeout,
			ReadTimeout:   co.ReadTimeout,
			WriteTimeout:  co.WriteTimeout,
			PoolSize:      co.PoolSize,
			MaxRetries:    co.MaxRetries,
			ClientName:    co.ClientName,
			Protocol:      co.Protocol,
		}, nil
	default:
		o, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, bad("option", scrub(err, raw))
		}
		return &redis.UniversalOptions{
			Addrs:        []string{o.Addr},
			Username:     o.Username,
			Password:     o.Password,
			DB:           o.DB,
			TLSConfig:    o.TLSConfig,
			DialTimeout:  o.DialTimeout,
			ReadTimeout:  o.ReadTimeout,
			WriteTimeout: o.WriteTimeout,
			PoolSize:     o.PoolSize,
			MaxRetries:   o.MaxRetries,
			ClientName:   o.ClientName,
			Protocol:     o.Protocol,
		}, nil
	}
}

func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return fmt.Errorf("%q is not host:port", Redact(hp))
	}
	if host == "" {
		return fmt.Errorf("%q has no host", hp)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// scrub returns err's text with any secret of raw removed, as a last guard:
// go-redis option errors do not quote the URL, but this keeps it that way.
func scrub(err error, raw string) string {
	msg := err.Error()
	for _, s := range secrets(raw) {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	return msg
}

const redacted = "xxxxx"

var secretParams = []string{"password", "sentinel_password"}

// splitURL splits raw into scheme, userinfo (before the last "@", which
// may itself hold "/", "?" or "#"), host list, and the rest (path, query,
// fragment). It never fails, since Redact needs it most on malformed input.
func splitURL(raw string) (scheme, userinfo, hostlist, tail string, hasScheme bool) {
	rest := raw
	if i := strings.Index(raw, "://"); i >= 0 {
		scheme, rest, hasScheme = raw[:i], raw[i+3:], true
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		userinfo, rest = rest[:at], rest[at+1:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	return scheme, userinfo, rest[:end], rest[end:], hasScheme
}

// secrets lists the passwords found in raw (userinfo and query).
func secrets(raw string) []string {
	var out []string
	_, userinfo, _, tail, _ := splitURL(raw)
	if _, pw, ok := strings.Cut(userinfo, ":"); ok {
		userinfo = pw
	}
	if userinfo != "" {
		out = append(out, userinfo)
	}
	if _, query, ok := strings.Cut(tail, "?"); ok {
		query, _, _ = strings.Cut(query, "#")
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			for _, p := range secretParams {
				if strings.EqualFold(k, p) && v != "" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// Redact returns raw with passwords replaced by "xxxxx": the userinfo
// password (or the whole userinfo when it has no colon, since some write
// redis://password@host) and password query options. It works on malformed
// input too, because error messages need it most there.
func Redact(raw string) string {
	scheme, userinfo, hostlist, tail, hasScheme := splitURL(raw)
	var b strings.Builder
	if hasScheme {
		b.WriteString(scheme + "://")
	}
	if strings.Contains(raw, "@") {
		if user, _, ok := strings.Cut(userinfo, ":"); ok {
			b.WriteString(user + ":" + redacted + "@")
		} else {
			b.WriteString(redacted + "@")
		}
	}
	b.WriteString(hostlist)
	if path, query, ok := strings.Cut(tail, "?"); ok {
		query, frag, hasFrag := strings.Cut(query, "#")
		parts := strings.Split(query, "&")
		for i, kv := range parts {
			k, _, _ := strings.Cut(kv, "=")
			for _, p := range secretParams {
				if strings.EqualFold(k, p) {
					parts[i] = k + "=" + redacted
				}
			}
		}
		tail = path + "?" + strings.Join(parts, "&")
		if hasFrag {
			tail += "#" + frag
		}
	}
	b.WriteString(tail)
	return b.String()
}

// URL is a URL of e's Redis that another process connects with as e's own
// clients do, ParseURL's inverse: through its Sentinels (redis-sentinel://
// with master_name) on the sentinel topology, by a cluster's seeds, else to
// its primary; with the passwords it needs. It is for a process's
// environment, never a command line, for it may hold a password. Options
// a URL cannot carry (a TLS config's certificates) are not in it.
func (e *Env) URL() string { return optionsURL(e.Options()) }

func optionsURL(o *redis.UniversalOptions) string {
	u := url.URL{Scheme: "redis", Host: strings.Join(o.Addrs, ",")}
	if o.TLSConfig != nil {
		u.Scheme = "rediss"
	}
	q := url.Values{}
	switch {
	case o.MasterName != "":
		// The userinfo is the Sentinels', the query the primary's.
		u.Scheme += "-sentinel"
		u.User = userinfo(o.SentinelUsername, o.SentinelPassword)
		u.Path = "/" + strconv.Itoa(o.DB)
		q.Set("master_name", o.MasterName)
		if o.Username != "" {
			q.Set("username", o.Username)
		}
		if o.Password != "" {
			q.Set("password", o.Password)
		}
	case len(o.Addrs) > 1:
		u.User = userinfo(o.Username, o.Password) // a cluster has database 0 only
	default:
		u.User = userinfo(o.Username, o.Password)
		u.Path = "/" + strconv.Itoa(o.DB)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// userinfo is a URL's user and password, nil when there is neither.
func userinfo(user, password string) *url.Userinfo {
	if user == "" && password == "" {
		return nil
	}
	return url.UserPassword(user, password)
}
