"""Reports: self-contained HTML (inline CSS and SVG figures), figures and notebook execution.

Nothing below imports the CLI; the CLI and notebooks call into this package."""
