"""The local web dashboard (docs/reference/dashboard.md): a channel that shows state and decides
approvals."""
