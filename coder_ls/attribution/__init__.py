"""Which lines the agent wrote in a session, and what the user did to them since (contract
section 23, "What the user changed" and "Attribution")."""
