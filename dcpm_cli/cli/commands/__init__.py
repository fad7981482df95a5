"""The command modules; each registers its commands on the app."""
