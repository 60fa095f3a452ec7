"""HTML shared by every report: the page shell, atomic writes, charts."""
