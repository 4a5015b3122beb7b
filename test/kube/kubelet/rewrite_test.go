package kubelet

import "testing"

func TestRewrite(t *testing.T) {
	rw := newRewriter([]mount{
		{container: "/opt/tide/conf", host: "/k/pods/ns/p/volumes/conf"},
		{container: "/opt/tide/conf/extra/", host: "/k/pods/ns/p/volumes/extra"},
		{container: "/data", host: "/k/pods/ns/p/volumes/data"},
	})
	tests := []struct{ in, want string }{
		{"/opt/tide/conf", "/k/pods/ns/p/volumes/conf"},
		{"/opt/tide/conf/flink-conf.yaml", "/k/pods/ns/p/volumes/conf/flink-conf.yaml"},
		{"--configDir=/opt/tide/conf", "--configDir=/k/pods/ns/p/volumes/conf"},
		{"/opt/tide/conf/extra/x", "/k/pods/ns/p/volumes/extra/x"},
		{"/opt/tide/config", "/opt/tide/config"},
		{"/opt/tide/conf.d", "/opt/tide/conf.d"},
		{"/other/opt/tide/conf", "/other/opt/tide/conf"},
		{"file:///data/x", "file:///data/x"},
		{"a:/data:/data/y", "a:/k/pods/ns/p/volumes/data:/k/pods/ns/p/volumes/data/y"},
		{"/data,/data", "/k/pods/ns/p/volumes/data,/k/pods/ns/p/volumes/data"},
		{"no paths", "no paths"},
		{"/datax", "/datax"},
	}
	for _, tt := range tests {
		if got := rw.rewrite(tt.in); got != tt.want {
			t.Errorf("rewrite(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
