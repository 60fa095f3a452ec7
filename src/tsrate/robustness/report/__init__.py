"""The core's HTML rating report, read from the published snapshot."""
