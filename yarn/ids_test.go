package yarn

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/yarn/yarnpb"
)

func TestIDStrings(t *testing.T) {
	app := &yarnpb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1577164554399), Id: proto.Int32(13)}
	att := &yarnpb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)}
	if got := ApplicationIDString(app); got != "application_1577164554399_0013" {
		t.Errorf("application id %s", got)
	}
	if got := AttemptIDString(att); got != "appattempt_1577164554399_0013_000001" {
		t.Errorf("attempt id %s", got)
	}
	tests := []struct {
		id   int64
		want string
	}{
		{2, "container_1577164554399_0013_01_000002"},
		{3<<40 | 1234567, "container_e03_1577164554399_0013_01_1234567"},
	}
	for _, tt := range tests {
		c := &yarnpb.ContainerIdProto{AppId: app, AppAttemptId: att, Id: proto.Int64(tt.id)}
		if got := ContainerIDString(c); got != tt.want {
			t.Errorf("container id %d = %s, want %s", tt.id, got, tt.want)
		}
		back, err := ParseContainerID(tt.want)
		if err != nil || !proto.Equal(back, c) {
			t.Errorf("ParseContainerID(%s) = %v, %v", tt.want, back, err)
		}
	}
	if got := NodeIDString(&yarnpb.NodeIdProto{Host: proto.String("nm1"), Port: proto.Int32(45454)}); got != "nm1:45454" {
		t.Errorf("node id %s", got)
	}
}

func TestParseIDsRejects(t *testing.T) {
	for _, s := range []string{"", "application_1", "application_x_1", "app_1_2", "application_1_-2", "application_1_2_3"} {
		if _, err := ParseApplicationID(s); err == nil {
			t.Errorf("ParseApplicationID(%q) accepted", s)
		}
	}
	for _, s := range []string{"", "container_1_2_3", "container_ex_1_2_3_4", "container_1_2_3_x", "container_1_2_3_4_5", "task_1_2_3_4", "container_1_2_3_1099511627776"} {
		if _, err := ParseContainerID(s); err == nil {
			t.Errorf("ParseContainerID(%q) accepted", s)
		}
	}
	app, err := ParseApplicationID("application_1700000000000_0001")
	if err != nil || app.GetId() != 1 || app.GetClusterTimestamp() != 1700000000000 {
		t.Errorf("ParseApplicationID = %v, %v", app, err)
	}
}

func FuzzParseContainerID(f *testing.F) {
	f.Add("container_1577164554399_0013_01_000002")
	f.Add("container_e03_1577164554399_0013_01_1234567")
	f.Add("container__")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseContainerID(s)
		if err != nil {
			return
		}
		again, err := ParseContainerID(ContainerIDString(c))
		if err != nil || !proto.Equal(again, c) {
			t.Fatalf("%q parsed to %v, which formats to %q and parses to %v (%v)", s, c, ContainerIDString(c), again, err)
		}
	})
}

func FuzzParseApplicationID(f *testing.F) {
	f.Add("application_1577164554399_0013")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseApplicationID(s)
		if err != nil {
			return
		}
		again, err := ParseApplicationID(ApplicationIDString(a))
		if err != nil || !proto.Equal(again, a) {
			t.Fatalf("%q: round trip %v → %v (%v)", s, a, again, err)
		}
	})
}
