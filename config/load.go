package config

import "errors"

// Load resolves the configuration. TODO(config): registry, TOML file, precedence.
func Load(opts LoadOptions) (*Config, error) {
	return nil, errors.New("config: not built yet")
}
