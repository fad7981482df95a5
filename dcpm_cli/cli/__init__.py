"""The `dcpm` command line: app.py (the app, errors, shared options), main.py (registers commands)."""
