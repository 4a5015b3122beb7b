package conf

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseDynamic(t *testing.T) {
	got, err := ParseDynamic([]string{"-Dexecution-mode=reactive", "-D", "rest.port=9000", "heartbeat.timeout=10 s", "-Dk=a=b", "-Dempty="})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Key: "execution-mode", Value: "reactive", Source: Source{Kind: FromDynamic, Arg: 1, Key: "execution-mode"}},
		{Key: "rest.port", Value: "9000", Source: Source{Kind: FromDynamic, Arg: 2, Key: "rest.port"}},
		{Key: "heartbeat.timeout", Value: "10 s", Source: Source{Kind: FromDynamic, Arg: 4, Key: "heartbeat.timeout"}},
		{Key: "k", Value: "a=b", Source: Source{Kind: FromDynamic, Arg: 5, Key: "k"}},
		{Key: "empty", Value: "", Source: Source{Kind: FromDynamic, Arg: 6, Key: "empty"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestParseDynamicErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-Drest.port"}, `-D: argument 1: "rest.port" has no '=' (expected -Dkey=value)`},
		{[]string{"a=1", "-D=5"}, `-D: argument 2: "=5" has an empty key (expected -Dkey=value)`},
		{[]string{" =5"}, `-D: argument 1: " =5" has an empty key (expected -Dkey=value)`},
		{[]string{"-D"}, `-D: argument 1: -D is not followed by key=value`},
		{[]string{"-D", "novalue"}, `-D: argument 1: "novalue" has no '=' (expected -Dkey=value)`},
		{[]string{"-Da b=1"}, `-D: argument 1: key "a b" contains a space`},
	}
	for _, tt := range tests {
		_, err := ParseDynamic(tt.args)
		var pe *ParseError
		if !errors.As(err, &pe) || err.Error() != tt.want {
			t.Errorf("ParseDynamic(%q) = %v; want %s", tt.args, err, tt.want)
		}
	}
}
