package yarn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// ApplicationType is the YARN application type of tide applications.
const ApplicationType = "Tide"

// Submission is one `tide run --target yarn-per-job`.
type Submission struct {
	RM *ClientRM
	// Staging is the staging root (hdfs://…/user/<user>/.tide); the application's files
	// go under <appId>/ there.
	Staging storage.Storage
	// Binary is the local tide binary shipped to every container.
	Binary string
	// HadoopConf are the client's Hadoop configuration files (core-site.xml, hdfs-site.xml)
	// shipped to every container, which then runs with HADOOP_CONF_DIR=. (as Flink ships the
	// configuration it was submitted with): hdfs:/// and HA nameservices resolve there as on
	// the client.
	HadoopConf []string
	// Config renders the effective flink-conf.yaml, given the staging directory URI of
	// the application (so defaults such as the checkpoint directory can live there).
	Config func(stagingDir string) ([]byte, error)

	JobName string
	JobArgs []string
	// JobManagerDynamic are -D properties (key=value) for the AM command line.
	JobManagerDynamic []string

	AppName  string
	Queue    string // "" uses the scheduler's default queue
	Attempts int
	// FailuresValidity is YARN's attempt failures validity interval: only AM attempts that
	// failed within it count towards Attempts (<= 0: every failure counts).
	FailuresValidity time.Duration

	AMMemoryMB int64
	AMVCores   int32
	TMMemoryMB int64
	TMVCores   int32

	RMAddress, SchedulerAddress string
	User                        string
	// Env is extra AM environment (TIDE_LOG_LEVEL, …).
	Env map[string]string
	// Tokens is a Hadoop credentials blob for the AM container (the internal secret); the
	// ResourceManager adds the AMRMToken to it.
	Tokens []byte

	Logger *slog.Logger
}

// Application is a submitted application.
type Application struct {
	ID         *yarnpb.ApplicationIdProto
	StagingDir string // URI of the application's staging directory
	Resources  []*yarnpb.StringLocalResourceMapProto
}

// Submit uploads the binary and configuration, then submits the AM container. It checks
// first what YARN would refuse later or never say: a queue that does not exist
// (ErrQueueNotFound) and containers larger than the maximum allocation
// (ErrResourceTooLarge); an unreachable RM is ErrRMUnreachable.
func Submit(ctx context.Context, s Submission) (*Application, error) {
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	newApp, err := s.RM.GetNewApplication(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager %s for a new application: %w", s.RM.Addr(), err)
	}
	appID := newApp.GetApplicationId()
	app := ApplicationIDString(appID)
	maxCap := newApp.GetMaximumCapability()
	am := &yarnpb.ResourceProto{Memory: proto.Int64(s.AMMemoryMB), VirtualCores: proto.Int32(s.AMVCores)}
	if err := CheckFits(am, maxCap); err != nil {
		return nil, fmt.Errorf("%s: the AM container (jobmanager.memory.process.size, yarn.appmaster.vcores): %w", app, err)
	}
	tm := &yarnpb.ResourceProto{Memory: proto.Int64(s.TMMemoryMB), VirtualCores: proto.Int32(s.TMVCores)}
	if err := CheckFits(tm, maxCap); err != nil {
		return nil, fmt.Errorf("%s: the TaskManager containers (taskmanager.memory.process.size, yarn.containers.vcores): %w", app, err)
	}
	if s.Queue != "" {
		if _, err := s.RM.GetQueueInfo(ctx, s.Queue); err != nil {
			return nil, fmt.Errorf("%s: yarn.application.queue: %w", app, err)
		}
	}

	stagingDir := s.Staging.URI() + "/" + app
	res, err := s.upload(ctx, app, stagingDir)
	if err != nil {
		if derr := s.Staging.Delete(context.WithoutCancel(ctx), app); derr != nil {
			log.Warn("cleaning up the staging directory failed", "dir", stagingDir, "err", derr)
		}
		return nil, err
	}
	encoded, err := EncodeResources(res)
	if err != nil {
		return nil, err
	}
	env := map[string]string{
		EnvRMAddress:        s.RMAddress,
		EnvSchedulerAddress: s.SchedulerAddress,
		EnvResources:        encoded,
		EnvStagingDir:       stagingDir,
		EnvUser:             s.User,
		"HADOOP_USER_NAME":  s.User,
	}
	if len(s.HadoopConf) > 0 {
		env["HADOOP_CONF_DIR"] = ShippedHadoopConfDir
	}
	for k, v := range s.Env {
		env[k] = v
	}
	args := []string{"jobmanager", "--configDir", ".", "--job-classname", s.JobName}
	for _, p := range s.JobManagerDynamic {
		args = append(args, "-D"+p)
	}
	if len(s.JobArgs) > 0 {
		args = append(append(args, "--"), s.JobArgs...)
	}
	sub := &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId:   appID,
		ApplicationName: proto.String(s.AppName),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{
			LocalResources: res,
			Environment:    envProto(env),
			Command:        []string{containerCommand(args, "jobmanager")},
			Tokens:         s.Tokens,
		},
		MaxAppAttempts:  proto.Int32(int32(s.Attempts)),
		Resource:        am,
		ApplicationType: proto.String(ApplicationType),
		// With more than one attempt, TaskManager containers outlive the AM: they find
		// the next attempt's AM through the address file in the staging directory.
		KeepContainersAcrossApplicationAttempts: proto.Bool(s.Attempts > 1),
	}
	if s.Queue != "" {
		sub.Queue = proto.String(s.Queue)
	}
	if s.FailuresValidity > 0 {
		sub.AttemptFailuresValidityInterval = proto.Int64(s.FailuresValidity.Milliseconds())
	}
	if err := s.RM.SubmitApplication(ctx, sub, maxCap); err != nil {
		if derr := s.Staging.Delete(context.WithoutCancel(ctx), app); derr != nil {
			log.Warn("cleaning up the staging directory failed", "dir", stagingDir, "err", derr)
		}
		return nil, err
	}
	log.Info("submitted YARN application", "application", app, "staging", stagingDir, "queue", sub.GetQueue(), "attempts", s.Attempts,
		"attempt_failures_validity", sub.GetAttemptFailuresValidityInterval(),
		"keep_containers", sub.GetKeepContainersAcrossApplicationAttempts())
	return &Application{ID: appID, StagingDir: stagingDir, Resources: res}, nil
}

// upload writes the binary and the configuration under app/ and describes them as
// LocalResources (size and modification time must match what the NodeManager finds).
func (s Submission) upload(ctx context.Context, app, stagingDir string) ([]*yarnpb.StringLocalResourceMapProto, error) {
	cfg, err := s.Config(stagingDir)
	if err != nil {
		return nil, err
	}
	bin, err := os.Open(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("the binary to ship: %w", err)
	}
	defer bin.Close()
	files := []struct {
		name string
		src  io.Reader
	}{{BinaryName, bin}, {ConfigName, bytes.NewReader(cfg)}}
	for _, p := range s.HadoopConf {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("the Hadoop configuration to ship: %w", err)
		}
		files = append(files, struct {
			name string
			src  io.Reader
		}{filepath.Base(p), bytes.NewReader(b)})
	}
	var out []*yarnpb.StringLocalResourceMapProto
	for _, f := range files {
		name := app + "/" + f.name
		w, err := s.Staging.Create(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("uploading %s to %s: %w", f.name, stagingDir, err)
		}
		if _, err := io.Copy(w, f.src); err != nil {
			_ = w.Abort(ctx)
			return nil, fmt.Errorf("uploading %s to %s: %w", f.name, stagingDir, err)
		}
		if err := w.Commit(ctx); err != nil {
			return nil, fmt.Errorf("uploading %s to %s: %w", f.name, stagingDir, err)
		}
		info, err := s.Staging.Stat(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("uploaded %s: %w", name, err)
		}
		lr, err := localResource(stagingDir+"/"+f.name, info.Size, info.ModTime)
		if err != nil {
			return nil, err
		}
		out = append(out, &yarnpb.StringLocalResourceMapProto{Key: proto.String(f.name), Value: lr})
	}
	return out, nil
}

// localResource describes a file at uri (hdfs://host:port/path or file:///path).
func localResource(uri string, size int64, mtime time.Time) (*yarnpb.LocalResourceProto, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("local resource %s: %w", uri, err)
	}
	ru := &yarnpb.URLProto{Scheme: proto.String(u.Scheme), File: proto.String(u.Path)}
	if h := u.Hostname(); h != "" {
		ru.Host = proto.String(h)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("local resource %s: bad port %q", uri, p)
		}
		ru.Port = proto.Int32(int32(n))
	}
	if u.Path == "" {
		return nil, errors.New("local resource " + uri + ": no path")
	}
	return &yarnpb.LocalResourceProto{
		Resource:   ru,
		Size:       proto.Int64(size),
		Timestamp:  proto.Int64(mtime.UnixMilli()),
		Type:       yarnpb.LocalResourceTypeProto_FILE.Enum(),
		Visibility: yarnpb.LocalResourceVisibilityProto_APPLICATION.Enum(),
	}, nil
}
