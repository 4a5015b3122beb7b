package exec

// ManifestKeyGroups exposes manifestKeyGroups to the external tests.
var ManifestKeyGroups = manifestKeyGroups
