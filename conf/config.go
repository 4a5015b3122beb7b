package conf

import (
	"maps"
	"sort"
)

// redacted replaces secret values in Map and Diff.
const redacted = "******"

// setting is a value as written, with where it was written.
type setting struct {
	value  string
	source Source
}

// Config is an immutable snapshot of the configuration: the values set by the file, -D or With
// (under their current key names, unknown keys included as written), and every declared option's
// parsed value (set, else default). Build it with Load or Build; read it with Option.Get.
type Config struct {
	set    map[string]setting
	values map[string]any
}

// Defaults returns the configuration with nothing set.
func Defaults() *Config {
	c, _, err := Build()
	if err != nil {
		panic("conf: declared defaults do not validate: " + err.Error())
	}
	return c
}

// canonical maps a key or alias to the key it is stored under.
func canonical(key string) string {
	if s, ok := Lookup(key); ok {
		return s.Key
	}
	return key
}

// IsSet reports whether key (or one of its aliases) was set by the file, -D or With rather than
// taken from its default. Callers use it to apply mode-dependent defaults (reactive mode).
func (c *Config) IsSet(key string) bool {
	_, ok := c.set[canonical(key)]
	return ok
}

// Value returns key's value as written (set, else the declared default) and whether there is one.
func (c *Config) Value(key string) (string, bool) {
	k := canonical(key)
	if s, ok := c.set[k]; ok {
		return s.value, true
	}
	if s, ok := Lookup(k); ok && s.Default != "" {
		return s.Default, true
	}
	return "", false
}

// Source returns where key's value came from; FromDefault for declared options left unset.
func (c *Config) Source(key string) Source {
	k := canonical(key)
	if s, ok := c.set[k]; ok {
		return s.source
	}
	return Source{Kind: FromDefault, Key: k}
}

// Keys returns the keys set by the file, -D or With, sorted.
func (c *Config) Keys() []string {
	keys := make([]string, 0, len(c.set))
	for k := range c.set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Map returns the effective configuration for display (REST /jobmanager/config): every declared
// option that has a value (set or default) and every unknown key that is set, as written. Secret
// values are replaced by "******".
func (c *Config) Map() map[string]string {
	out := make(map[string]string, len(registry.ordered)+len(c.set))
	for _, s := range registry.ordered {
		if v, ok := c.Value(s.Key); ok {
			if s.Secret && v != "" {
				v = redacted
			}
			out[s.Key] = v
		}
	}
	for k, s := range c.set {
		if _, known := out[k]; !known {
			out[k] = s.value
		}
	}
	return out
}

// With returns a copy of c with key set to value (an alias sets the new key), validated like a
// file value. Use it for programmatic overrides, such as a job's own settings.
func (c *Config) With(key, value string) (*Config, error) {
	set := maps.Clone(c.set)
	if set == nil {
		set = map[string]setting{}
	}
	set[canonical(key)] = setting{value: value, source: Source{Kind: FromProgram, Key: key}}
	values, err := resolve(set)
	if err != nil {
		// resolve's errors name the key, the value and the source ("override").
		return nil, err
	}
	return &Config{set: set, values: values}, nil
}

// normalized is key's value in canonical form for comparison ("10s" and "10 s" are equal),
// redacted when secret; "" when it has none.
func (c *Config) normalized(key string) string {
	if s, ok := Lookup(key); ok {
		v, has := c.values[s.Key]
		if !has {
			return ""
		}
		out := s.format(v)
		if s.Secret && out != "" {
			return redacted
		}
		return out
	}
	return c.set[key].value
}
