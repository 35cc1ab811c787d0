"""The operator's configuration: the TOML file's schema, loading it, errors in words, TLS
contexts and proxy-side users."""
