"""Importers of what operators already have: admin-tool output, one module per source.

`import_files` detects each file's format (or takes --format), lets every file add its
facts to one `ImportState`, then builds one snapshot from all of them, so a topicRoute,
a consumerConnection and a consumerProgress together give queues, members, offsets and
observed.
"""

from __future__ import annotations

FORMATS: tuple[str, ...] = ()
