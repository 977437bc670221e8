"""Owner approval: the gate that holds outward calls, and the rules that pre-approve some."""
