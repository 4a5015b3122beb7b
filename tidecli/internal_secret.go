package tidecli

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/internal/hadoop/security"
)

// internalSecret is the secret of the AM-TaskManager RPC and the data plane: from
// security.internal.secret-file, security.internal.secret or $TIDE_INTERNAL_SECRET, else, in
// a YARN container, from the container's credentials file (tide run and the AM put it there).
// None is fine on loopback; the AM and the data plane refuse other addresses without one.
func internalSecret(cfg *conf.Config) (clusterauth.Secret, error) {
	s, src, err := clusterauth.Load(conf.InternalSecret.Get(cfg), conf.InternalSecretFile.Get(cfg))
	if err != nil {
		return nil, err
	}
	if !s.Set() && os.Getenv(security.TokenFileEnv) != "" {
		creds, err := security.LoadCredentialsFromEnv()
		if err != nil {
			return nil, fmt.Errorf("the internal secret: %w", err)
		}
		if v := creds.Secrets[clusterauth.CredentialsAlias]; len(v) > 0 {
			s, src = clusterauth.Secret(v), "the YARN container's credentials"
		}
	}
	if s.Set() {
		slog.Info("internal connections authenticated with a shared secret", "source", string(src))
	}
	return s, nil
}

// yarnCredentials encodes the secret as a Hadoop credentials blob for a container launch
// context: the NodeManager writes it to a file only the application's user can read and points
// $HADOOP_TOKEN_FILE_LOCATION at it.
func yarnCredentials(s clusterauth.Secret) []byte {
	if !s.Set() {
		return nil
	}
	c := security.Credentials{Secrets: map[string][]byte{clusterauth.CredentialsAlias: s}}
	return c.AppendWritable(nil)
}
