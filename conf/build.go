package conf

import (
	"slices"

	"github.com/hashicorp/go-multierror"
)

// Build assembles a configuration from layers of entries, later layers winning (Load passes the
// file's entries, then the -D entries). Within one layer a new key wins over its deprecated alias
// and a repeated key's last value wins. Every declared option's value is parsed and checked; all
// problems are returned together (*ValueError, *ConflictError). Warnings report deprecated,
// shadowed, duplicate and unknown keys.
func Build(layers ...[]Entry) (*Config, []Warning, error) {
	set := map[string]setting{}
	var warnings []Warning
	for _, layer := range layers {
		chosen := map[string]Entry{}
		for _, e := range layer {
			if e.Source.Key == "" {
				e.Source.Key = e.Key
			}
			key := e.Key
			if spec, known := Lookup(e.Key); known {
				key = spec.Key
				if slices.Contains(spec.Deprecated, e.Key) {
					warnings = append(warnings, Warning{Kind: DeprecatedKey, Key: e.Key, Related: spec.Key, Source: e.Source})
				}
			} else if !isOpenKey(e.Key) {
				warnings = append(warnings, Warning{Kind: UnknownKey, Key: e.Key, Related: suggest(e.Key), Source: e.Source})
			}
			prev, seen := chosen[key]
			if !seen {
				chosen[key] = e
				continue
			}
			prevIsNew, curIsNew := prev.Key == key, e.Key == key
			switch {
			case prevIsNew && !curIsNew:
				warnings = append(warnings, Warning{Kind: ShadowedKey, Key: e.Key, Related: key, Source: e.Source})
			case !prevIsNew && curIsNew:
				warnings = append(warnings, Warning{Kind: ShadowedKey, Key: prev.Key, Related: key, Source: prev.Source})
				chosen[key] = e
			default:
				warnings = append(warnings, Warning{Kind: DuplicateKey, Key: e.Key, Source: e.Source})
				chosen[key] = e
			}
		}
		for key, e := range chosen {
			set[key] = setting{value: e.Value, source: e.Source}
		}
	}
	values, err := resolve(set)
	if err != nil {
		return nil, warnings, err
	}
	return &Config{set: set, values: values}, warnings, nil
}

// resolve parses every declared option's value (set, else default) and runs the cross-key checks.
func resolve(set map[string]setting) (map[string]any, error) {
	var errs *multierror.Error
	values := make(map[string]any, len(registry.ordered))
	for _, spec := range registry.ordered {
		s, ok := set[spec.Key]
		if !ok {
			if spec.def != nil {
				values[spec.Key] = spec.def
			}
			continue
		}
		v, problem := spec.parse(s.value)
		if problem != "" {
			errs = multierror.Append(errs, &ValueError{
				Key: spec.Key, Value: s.value, Problem: problem, Expected: spec.expected, Source: s.source,
			})
			continue
		}
		values[spec.Key] = v
	}
	for _, err := range checkConflicts(set, values) {
		errs = multierror.Append(errs, err)
	}
	if errs == nil {
		return values, nil
	}
	if len(errs.Errors) == 1 {
		return nil, errs.Errors[0]
	}
	return nil, errs
}
