// Package conf is tide's configuration: the typed options tide reads (declared once, in
// options.go), the Flink-compatible flink-conf.yaml parser, -D overrides and live reload.
//
// A configuration is assembled from layers, later layers winning:
//
//	defaults (options.go) ──► flink-conf.yaml ($FLINK_CONF_DIR or an explicit dir) ──► -Dkey=value
//	                                  │                                                    │
//	                          Parse: flat "key: value"                            ParseDynamic
//	                          (Flink's legacy format) or
//	                          nested YAML flattened with dots
//	                                  └──────────────► Build ◄─────────────────────────────┘
//	                                                     │ aliases → new keys (deprecation warnings)
//	                                                     │ unknown keys → warnings with suggestions
//	                                                     │ every value parsed and range-checked
//	                                                     ▼
//	                                         *Config (immutable snapshot; value + source)
//	                                                     │
//	                     Option[T].Get(cfg) · cfg.IsSet · cfg.Map (REST) · cfg.Diff(old)
//
// Within one layer a new (Flink 2.x) key wins over its deprecated alias; across layers the later
// layer wins, so -D always beats the file, even when the file uses the new key and -D the alias.
//
// The Watcher watches the configuration directory with fsnotify (the directory, not the file, so
// Kubernetes ConfigMap "..data" symlink swaps and editors' write-then-rename both count),
// debounces bursts, re-reads and re-validates the file, diffs it against the previous snapshot
// and delivers one Reload per effective change, split into changes that can be applied live
// (Spec.Reloadable) and changes that need a restart. A file that does not parse or validate keeps
// the previous configuration and is reported with its file and line.
//
// conf/flink-conf.yaml, in this directory, is the shipped default file; it documents every option
// with its default, and a test keeps it and options.go in step.
package conf
