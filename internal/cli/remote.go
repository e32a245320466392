package cli

import (
	"fmt"

	"github.com/weirflow/weir/internal/apiclient"
)

// apiClient returns the REST client of the deployment the CLI reaches
// remotely, or nil when it works on the local database. The API is, in
// this order: --api-url (or $WEIR_API_URL) with $WEIR_API_TOKEN; --api-url
// with the stored login's token when the login is for that URL; the stored
// login (`weir login`). $WEIR_API_URL without a token and without a login is
// not remote mode: a task's environment has it for the in-task commands.
func (a *app) apiClient() (*apiclient.Client, error) {
	flagURL := a.apiURL
	url := flagURL
	if url == "" {
		url = a.getenv("WEIR_API_URL")
	}
	token := a.getenv("WEIR_API_TOKEN")
	if url != "" && token != "" {
		return a.newAPIClient(url, token, "")
	}
	if (a.getenv("WEIR_TASK_TOKEN") != "" || a.getenv("WEIR_TASK_TOKEN_FILE") != "") && flagURL == "" {
		return nil, nil // inside a task: the in-task commands' API, not a login
	}
	path, err := a.credentialsPath()
	if err != nil && flagURL == "" {
		return nil, nil //nolint:nilerr // no configuration folder: no login, the local database
	}
	var creds *credentials
	if err == nil {
		if creds, err = loadCredentials(path); err != nil {
			return nil, err
		}
	}
	if creds == nil {
		if flagURL != "" {
			return nil, fmt.Errorf("--api-url %s: no token for it: log in with `weir login --api-url %s`, or set WEIR_API_TOKEN", flagURL, flagURL)
		}
		return nil, nil
	}
	if url != "" {
		want, err := apiclient.NormalizeURL(url)
		if err != nil {
			return nil, err
		}
		if have, _ := apiclient.NormalizeURL(creds.APIURL); have != want {
			return nil, fmt.Errorf("the API URL %s is not the one logged in to (%s): log in with `weir login --api-url %s`, or set WEIR_API_TOKEN", want, have, want)
		}
	}
	if token == "" {
		token = creds.Token
	}
	return a.newAPIClient(creds.APIURL, token, creds.CAFile)
}

// newAPIClient is a client of the API at url with token that trusts, for
// https, the system roots and caFile, else the configuration's [workers]
// tls_ca_file (WEIR__WORKERS__TLS_CA_FILE) when there is one.
func (a *app) newAPIClient(url, token, caFile string) (*apiclient.Client, error) {
	if caFile == "" {
		if cfg, err := a.config(); err == nil { // remote mode needs no home: a broken or absent one gives no CA
			caFile = cfg.Workers.TLSCAFile
		}
	}
	hc, err := apiclient.HTTPClient(caFile)
	if err != nil {
		return nil, err
	}
	return apiclient.New(url, token, hc)
}
