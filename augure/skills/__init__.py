"""Skills: folders of instructions and code the assistant runs (docs/reference/skills.md)."""
