"""The walk: which files of a repository are indexed, and what each is for (policy,
ignore files, globs, path guards, roles: `walker`, `policy`, `textclass`, ...)."""
