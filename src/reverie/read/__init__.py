"""The read path: from a query to ranked, explained memories."""
