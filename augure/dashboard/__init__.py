"""The local web dashboard (SPEC §12): a channel that shows state and decides approvals."""
