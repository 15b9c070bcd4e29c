"""The report model and what renders it: Markdown, HTML, annotations, merges."""
