"""File ▸ Export: what the features show, in a field-standard format."""
