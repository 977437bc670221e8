"""The `github` tool: issues, pull requests, releases and search through PyGithub, which is
imported when the tool first runs. `tool` declares it and its `[tools.github]` settings,
`actions` performs each action, `render` turns PyGithub objects into text."""

from augure.tools.github.tool import WRITES, GitHubSettings, github, github_token

__all__ = ["WRITES", "GitHubSettings", "github", "github_token"]
