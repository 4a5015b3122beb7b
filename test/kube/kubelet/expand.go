package kubelet

import "strings"

// expand replaces $(NAME) with vars[NAME] the way Kubernetes expands command, args and env
// values: "$$" is a literal "$" (so "$$(X)" stays "$(X)"), and a reference to an unknown
// name, or one that is not closed, is left as written.
func expand(s string, vars func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars(name); ok && name != "" {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 3 + end
			continue
		}
		b.WriteByte('$')
		i++
	}
	return b.String()
}
