"""The dev tools' commands, one module each. kubesched's main group finds them through the
`kubesched.commands` entry points in devtools/pyproject.toml and imports one only when it runs."""
