package coretest

import (
	"testing"
)

func TestParseScript(t *testing.T) {
	script := "# header\n\nadd-tm id=(tm1,tm2) slots=2 evacuate\nline one\n----\nout 1\nout 2\n\n# why\nstate\n----\n"
	ds, err := ParseScript("x.txt", script)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 {
		t.Fatalf("%d directives, want 2", len(ds))
	}
	d := ds[0]
	if d.Cmd != "add-tm" || d.Input != "line one" || d.Expected != "out 1\nout 2\n" || d.Pos != "x.txt:3" {
		t.Fatalf("directive = %+v", d)
	}
	if got := d.Vals("id"); len(got) != 2 || got[1] != "tm2" || d.Arg("slots", "") != "2" || !d.HasArg("evacuate") {
		t.Fatalf("args = %+v", d.Args)
	}
	if ds[1].Cmd != "state" || ds[1].Expected != "" || ds[1].Comment != "# why" || ds[0].Comment != "" {
		t.Fatalf("second directive = %+v", ds[1])
	}
	for _, bad := range []string{"cmd a=(b\n----\n", "cmd\nno separator\n", "cmd =x\n----\n", "cmd a=b)\n----\n"} {
		if _, err := ParseScript("bad.txt", bad); err == nil {
			t.Errorf("ParseScript(%q) = nil error, want one", bad)
		}
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add("add-tm id=(tm1,tm2) slots=2\n----\nok\n")
	f.Add("tick d=1s\ninput\n----\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		ds, err := ParseScript("fuzz.txt", s)
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.Cmd == "" {
				t.Fatalf("directive with empty command from %q", s)
			}
		}
	})
}
