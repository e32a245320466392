package ui

import (
	"net/http"

	"github.com/weirflow/weir/internal/config"
)

// configData is the configuration view's model.
type configData struct {
	Options []config.Option
}

// configPage shows the api-server's effective configuration, as `weir
// config list` prints it (config.Config.List: a URI's password is ***;
// secrets themselves live in files, which are named, never read here).
func (u *UI) configPage(w http.ResponseWriter, r *http.Request, req *request) {
	u.render(w, r, http.StatusOK, "config", req, "Configuration", configData{Options: u.cfg.Settings})
}
