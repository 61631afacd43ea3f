"""Files shipped with coder-ls: the bundled skills (`skills/<name>/SKILL.md`, source
`bundled`, last in the precedence order: any file of the same name replaces one)."""
