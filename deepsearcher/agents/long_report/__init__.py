"""Long reports: ``outline`` plans the table of contents, ``agent`` researches each section and runs the coherence
pass (docs/agents.md)."""
