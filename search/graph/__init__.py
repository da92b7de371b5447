"""How code connects: references resolved to one definition, callers, callees, call
paths and impact, over the code graph the indexer stores (`indexer.graph`).

`naming.name_definition` turns a symbol (NAME, qualified name, PATH:LINE) into one
definition; `queries` answers the questions over a repository's `workspace.Workspace`,
resolving each site with `resolve.Resolver` (imports through `modules.RepoLayout`).
"""
