package execclient

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables a worker gives a task (and the in-task CLI reads).
const (
	EnvAPIURL    = "WEIR_API_URL"
	EnvToken     = "WEIR_TASK_TOKEN"      //nolint:gosec // the name of a variable, not a credential
	EnvTokenFile = "WEIR_TASK_TOKEN_FILE" // kept current by the worker; preferred over EnvToken
	EnvTIID      = "WEIR_TI_ID"
	EnvDagID     = "WEIR_DAG_ID"
	EnvRunID     = "WEIR_RUN_ID"
	EnvTaskID    = "WEIR_TASK_ID"
	EnvMapIndex  = "WEIR_MAP_INDEX"
	EnvTry       = "WEIR_TRY_NUMBER"
)

// TaskEnv returns the environment variables (KEY=value) that give a task
// process access to the Execution API as id.
func TaskEnv(apiURL, token, tokenFile string, id TaskIdentity) []string {
	env := []string{
		EnvAPIURL + "=" + apiURL,
		EnvToken + "=" + token,
		EnvTIID + "=" + id.TIID,
		EnvDagID + "=" + id.DagID,
		EnvRunID + "=" + id.RunID,
		EnvTaskID + "=" + id.TaskID,
		EnvMapIndex + "=" + strconv.Itoa(id.MapIndex),
		EnvTry + "=" + strconv.Itoa(id.TryNumber),
	}
	if tokenFile != "" {
		env = append(env, EnvTokenFile+"="+tokenFile)
	}
	return env
}

// inTaskRetries is how many extra attempts the in-task CLI makes at least
// (with back-off capped at 5 s), and inTaskRetryFor how long it keeps
// trying at least: a random back-off of 14 attempts averaged under 30 s,
// so a 30 s outage of every api-server failed the tasks that called the
// API meanwhile, and their retries ran the commands again
// (TestDeploymentGuide).
const (
	inTaskRetries  = 14
	inTaskRetryFor = 2 * time.Minute
)

// ClientFromEnv builds the client of the in-task CLI (weir xcom push|pull,
// weir task-state ...) from the variables the worker set.
func ClientFromEnv() (*Client, error) {
	return clientFromLookup(os.LookupEnv)
}

func clientFromLookup(lookup func(string) (string, bool)) (*Client, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	base := get(EnvAPIURL)
	if base == "" {
		return nil, fmt.Errorf("%s is not set: run this inside a Weir task", EnvAPIURL)
	}
	token := get(EnvToken)
	if f := get(EnvTokenFile); f != "" {
		// The worker writes the file once it has refreshed the token;
		// until then the token in the environment is current.
		switch b, err := os.ReadFile(f); { //nolint:gosec // path given by the worker
		case err == nil:
			token = strings.TrimSpace(string(b))
		case !errors.Is(err, os.ErrNotExist) || token == "":
			return nil, fmt.Errorf("read %s: %w", EnvTokenFile, err)
		}
	}
	if token == "" {
		return nil, fmt.Errorf("%s is not set: run this inside a Weir task", EnvToken)
	}
	id := TaskIdentity{TIID: get(EnvTIID), DagID: get(EnvDagID), RunID: get(EnvRunID), TaskID: get(EnvTaskID), MapIndex: -1}
	for _, v := range []struct {
		name string
		dst  *int
	}{{EnvMapIndex, &id.MapIndex}, {EnvTry, &id.TryNumber}} {
		if s := get(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("%s must be an integer, got %q", v.name, s)
			}
			*v.dst = n
		}
	}
	// The in-task CLI rides out an api-server restart or an outage of up
	// to inTaskRetryFor (retries on no answer or 5xx), moving between the
	// api-servers the worker listed, rather than failing the task.
	ca := get(EnvCAFile)
	if ca != "" {
		if _, err := LoadCA(ca); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvCAFile, err)
		}
	}
	c := NewClient(base, token, ClientOptions{Retries: inTaskRetries, RetryFor: inTaskRetryFor, CAFile: ca})
	c.Identity = id
	return c, nil
}
