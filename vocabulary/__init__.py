"""The names every layer shares: keys, statuses, schemas and errors. Imports nothing of
the project, so any module may import it."""
