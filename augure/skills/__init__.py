"""Skills: folders of instructions and code the assistant runs (SPEC §7)."""
