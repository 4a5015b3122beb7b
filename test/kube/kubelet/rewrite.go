package kubelet

import (
	"sort"
	"strings"
)

// mount maps a container path (a volumeMount's mountPath, with its subPath) to the host
// directory holding that volume's files.
type mount struct {
	container, host string
}

// rewriter replaces mount paths by host paths in strings; longer mount paths first, so a
// mount nested in another maps to its own volume.
type rewriter []mount

func newRewriter(ms []mount) rewriter {
	out := make(rewriter, 0, len(ms))
	for _, m := range ms {
		c := strings.TrimRight(m.container, "/")
		if c == "" || m.host == "" {
			continue
		}
		out = append(out, mount{container: c, host: strings.TrimRight(m.host, "/")})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].container) > len(out[j].container) })
	return out
}

// pathByte reports whether c can be part of a path component.
func pathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '~' || c == '+' || c == '@' || c >= 0x80
}

// rewrite replaces every mount path in s that starts at a path boundary (start of s, or a
// character that is not part of a path, such as '=', ':', ',' or ' ') and ends at one ('/',
// end of s, or a character that is not part of a path).
func (r rewriter) rewrite(s string) string {
	if len(r) == 0 || !strings.Contains(s, "/") {
		return s
	}
	var b strings.Builder
	i := 0
outer:
	for i < len(s) {
		if s[i] == '/' && (i == 0 || (!pathByte(s[i-1]) && s[i-1] != '/')) {
			for _, m := range r {
				if !strings.HasPrefix(s[i:], m.container) {
					continue
				}
				end := i + len(m.container)
				if end < len(s) && (pathByte(s[end])) {
					continue
				}
				b.WriteString(m.host)
				i = end
				continue outer
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
