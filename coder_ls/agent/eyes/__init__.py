"""The editor as the agent's eyes (contract section 23): its language servers' diagnostics,
definitions, references and symbols as tools and as `@` references."""
