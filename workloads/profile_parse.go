package workloads

import (
	"bytes"
	"embed"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/internal/infile"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtins lists the built-in profiles, by name.
func Builtins() []Profile {
	entries, _ := builtinFS.ReadDir("builtin")
	var ps []Profile
	for _, e := range entries {
		p, err := decode(builtinPath(strings.TrimSuffix(e.Name(), ".yaml")))
		if err != nil {
			panic(fmt.Sprintf("workloads: built-in %s: %v", e.Name(), err))
		}
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return ps
}

func builtinPath(name string) string { return path.Join("builtin", name+".yaml") }

// BuiltinNames lists the names of the built-in profiles.
func BuiltinNames() []string {
	var names []string
	for _, p := range Builtins() {
		names = append(names, p.Name)
	}
	return names
}

// BuiltinYAML is the file behind a built-in profile, to copy and edit.
func BuiltinYAML(name string) ([]byte, error) {
	b, err := builtinFS.ReadFile(builtinPath(name))
	if err != nil {
		return nil, unknownProfile(name)
	}
	return b, nil
}

func unknownProfile(name string) error {
	return bad("profile", name, "no such built-in profile; known: %s (or --profile-file FILE)", strings.Join(BuiltinNames(), ", "))
}

// Builtin returns the built-in profile name.
func Builtin(name string) (Profile, error) {
	if _, err := BuiltinYAML(name); err != nil || strings.ContainsAny(name, "/\\") {
		return Profile{}, unknownProfile(name)
	}
	return decode(builtinPath(name))
}

func decode(p string) (Profile, error) {
	b, err := builtinFS.ReadFile(p)
	if err != nil {
		return Profile{}, err
	}
	return Parse(b, ".yaml")
}

// LoadFile reads a YAML (.yaml, .yml) or JSON (.json) profile. Fields it
// leaves out keep Default's values; an unknown field is an error. The name
// defaults to the file's base name.
func LoadFile(file string) (Profile, error) {
	b, err := infile.Read(file, infile.Profile)
	if err != nil {
		fix := "cannot read it: " + infile.Reason(err)
		switch {
		case errors.Is(err, infile.ErrNotRegular):
			fix = infile.Reason(err) + "; give a YAML or JSON file"
		case errors.Is(err, infile.ErrTooLarge):
			fix = infile.Reason(err)
		}
		return Profile{}, &FieldError{Field: "profile-file", Value: fmt.Sprintf("%q", file), Fix: fix}
	}
	p, err := Parse(b, filepath.Ext(file))
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return Profile{}, err
		}
		return Profile{}, &FieldError{Field: "profile-file", Value: fmt.Sprintf("%q", file), Fix: err.Error()}
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	return p, nil
}

// Parse decodes a profile over Default; ext ".json" selects JSON, anything
// else YAML. Each field is decoded on its own so every error names its
// field; unknown fields are refused, so a typo never silently becomes a
// default.
func Parse(b []byte, ext string) (Profile, error) {
	p := Default()
	fields := profileFields(&p)
	if strings.EqualFold(ext, ".json") {
		if len(bytes.TrimSpace(b)) == 0 {
			return Profile{}, errEmptyProfile
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return Profile{}, fmt.Errorf("not a valid JSON profile: %v", strings.TrimPrefix(err.Error(), "json: "))
		}
		if err := jsonDuplicates(b); err != nil {
			return Profile{}, err
		}
		if len(m) == 0 {
			return Profile{}, errEmptyProfile
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := fields[k]
			if !ok {
				return Profile{}, unknownField(k, "")
			}
			if err := json.Unmarshal(m[k], f.Addr().Interface()); err != nil {
				return Profile{}, fieldDecodeError(k, strings.TrimSpace(string(m[k])), f, err)
			}
		}
		return p, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Profile{}, errEmptyProfile
		}
		return Profile{}, fmt.Errorf("not a valid YAML profile: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	docs := 1
	for {
		var more yaml.Node
		if err := dec.Decode(&more); err != nil {
			break
		}
		docs++
	}
	if docs > 1 {
		return Profile{}, fmt.Errorf("holds %d YAML documents (separated by ---); a profile is one", docs)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null" {
		return Profile{}, errEmptyProfile
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return Profile{}, fmt.Errorf("not a YAML profile: line %d: want field: value lines", m.Line)
	}
	if len(m.Content) == 0 {
		return Profile{}, errEmptyProfile
	}
	if err := yamlDuplicates(m); err != nil {
		return Profile{}, err
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		f, ok := fields[k]
		if !ok {
			return Profile{}, unknownField(k, fmt.Sprintf("line %d", m.Content[i].Line))
		}
		if v.Kind == yaml.ScalarNode {
			if err := checkScalar(k, v.Value, f); err != nil {
				return Profile{}, err
			}
		}
		if err := v.Decode(f.Addr().Interface()); err != nil {
			return Profile{}, fieldDecodeError(k, v.Value, f, err)
		}
	}
	return p, nil
}

// errEmptyProfile refuses a file with no field: an empty file (or a
// truncated one) would otherwise run every default, which is not what
// anyone wrote.
var errEmptyProfile = errors.New("the file has no fields; write at least one, e.g. kind: reentrant, or use --profile NAME")

// yamlDuplicates refuses a key given twice in a mapping (depth's too):
// the last would silently win.
func yamlDuplicates(m *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if line, ok := seen[k.Value]; ok {
			return &FieldError{Field: k.Value, Fix: fmt.Sprintf("appears twice (lines %d and %d); keep one", line, k.Line)}
		}
		seen[k.Value] = k.Line
		if v := m.Content[i+1]; v.Kind == yaml.MappingNode {
			if err := yamlDuplicates(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonDuplicates refuses a key given twice in an object, at any depth:
// encoding/json keeps the last without a word.
func jsonDuplicates(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers are judged by their fields, not here
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if seen[k] {
					return &FieldError{Field: k, Fix: "appears twice; keep one"}
				}
				seen[k] = true
				if err := walk(); err != nil {
					return err
				}
			}
		case '[':
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	return walk()
}

// profileFields maps each field's file name to the field of p.
func profileFields(p *Profile) map[string]reflect.Value {
	m := map[string]reflect.Value{}
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		m[name] = v.Field(i)
	}
	return m
}

func unknownField(k, where string) error {
	fix := "unknown field; bench profiles show rw90 lists the fields"
	if where != "" {
		fix = "unknown field (" + where + "); bench profiles show rw90 lists the fields"
	}
	return &FieldError{Field: k, Fix: fix}
}

// fieldDecodeError keeps a custom type's own message and turns the
// decoders' type-mismatch messages into what the field wants.
func fieldDecodeError(k, val string, f reflect.Value, err error) error {
	msg := err.Error()
	if re := (*durationRangeError)(nil); errors.As(err, &re) && (k == "duration" || k == "warmup") {
		return &FieldError{Field: k, Value: fmt.Sprintf("%q", val), Fix: runTimeFix}
	}
	if _, custom := f.Addr().Interface().(encoding.TextUnmarshaler); custom {
		// Its own message says what it wants, unless the decoder refused
		// the value's type before asking it (a number for a duration).
		if strings.Contains(msg, "cannot unmarshal") {
			msg = "want text such as " + map[bool]string{true: `"30s"`, false: `"exp(1ms)"`}[f.Type() == reflect.TypeFor[Duration]()]
		}
		return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: strings.TrimPrefix(msg, "yaml: ")}
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		msg = "want a whole number"
	case reflect.Float64:
		msg = "want a number"
	case reflect.String:
		msg = "want text"
	case reflect.Bool:
		msg = "want true or false"
	default:
		if strings.Contains(msg, "cannot unmarshal") {
			msg = "wrong type"
		}
	}
	return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: strings.TrimPrefix(msg, "yaml: ")}
}

func orEmpty(v string) string {
	if v == "" {
		return "(empty or not a single value)"
	}
	return v
}

// ParseBool reads a yes/no value the one way lockbench reads every one,
// in profile fields (YAML, JSON, flag overrides) and in flags alike: true
// or false, as JSON writes them. YAML's yes/no/on/off and Go's 1/0/t/f
// were each taken by some readers and refused by others.
func ParseBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// checkScalar refuses a fraction for a whole-number field (YAML would
// silently truncate 2.9 to 2), and for a yes/no field anything ParseBool
// does not take (YAML would take yes, on or y).
func checkScalar(k, val string, f reflect.Value) error {
	if f.Kind() == reflect.Bool {
		if _, err := ParseBool(strings.TrimSpace(val)); err != nil {
			return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: err.Error()}
		}
		return nil
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64:
		if _, custom := f.Addr().Interface().(encoding.TextUnmarshaler); custom {
			return nil
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err != nil {
			return &FieldError{Field: k, Value: fmt.Sprintf("%q", orEmpty(val)), Fix: "want a whole number"}
		}
	}
	return nil
}

// YAML writes p in the profile file format.
func (p Profile) YAML() []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		panic(err) // every field type marshals
	}
	return b.Bytes()
}

// Set decodes value into the field named as in profile files ("read_ratio",
// "hold"), as a CLI flag overriding a profile does.
func (p *Profile) Set(field, value string) error {
	f, ok := profileFields(p)[field]
	if !ok {
		return unknownField(field, "")
	}
	if err := checkScalar(field, value, f); err != nil {
		return err
	}
	n := yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if err := n.Decode(f.Addr().Interface()); err != nil {
		return fieldDecodeError(field, value, f, err)
	}
	return nil
}

// Fields lists the profile's field names in file order.
func Fields() []string {
	var names []string
	t := reflect.TypeFor[Profile]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		names = append(names, name)
	}
	return names
}
